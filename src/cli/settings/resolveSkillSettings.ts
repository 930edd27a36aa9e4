import { stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

import { getBhrainConfigDir } from '../../agent/config/getBhrainConfigDir.js';
import type { BashSandboxMode } from '../../sandbox/BashSandbox.js';
import { normalizeDomainPattern } from '../../sandbox/network/allowedDomains.js';
import { PROJECT_CONFIG_PATHS } from '../../sandbox/protectedPaths.js';
import type { McpServerConfig } from '../../agent/toolboxes/mcp/genMcpToolBox.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { findNearestName } from '../../core/text/findNearestName.js';
import { credentialEnvVarsOf, SUPPLIER_TABLE } from '../../core/contract/supplierTable.js';
import { findRepoRoot } from '../../agent/git/findRepoRoot.js';
import type { McpProjectApproval } from '../mcp/resolveMcpServers.js';
import type { HooksSettings } from '../hooks/HooksSettings.js';
import type { SkillName } from '../genSkillCommand.js';
import { checkAtomSlug, readSettingsFile, type SettingsFile, type SettingsLayer } from './readSettingsFile.js';
import { LOOSENING, resolveProjectApproval, type ProjectApproval } from './resolveProjectApproval.js';
import {
  checkSettingText,
  flagName,
  SETTINGS,
  SETTING_NAMES,
  type SettingRow,
  BASE_URL_ENV_VARS,
  isHttpUrl,
  nameSettingOrigin,
  settingFileKey,
  SETTINGS_SUPPLIERS,
  type SettingKey,
  type SettingSource,
  type SettingsSupplier,
  type SkillSettings,
  type SkillSettingsFlags,
} from './settingsTable.js';

/** .what = the env var that gives a setting (BHRAIN_ATOM, BHRAIN_MODEL), from the table; baseUrl's are by supplier */
export const SETTINGS_ENV_VARS: Partial<Record<SettingKey, string>> = Object.fromEntries(
  SETTING_NAMES.filter((key) => key !== 'baseUrl' && SETTINGS[key].env?.length === 1).map((key) => [key, SETTINGS[key].env![0]]),
);

/** .what = the name of the settings file, in the user's config dir and in a project's .bhrain/ */
export const SETTINGS_FILE_NAME = 'settings.json';

/** .what = one settings file bhrain looked for, and whether it was there */
export interface SettingsFileFound {
  layer: SettingsLayer;
  path: string;
  found: boolean;
}

/** .what = the settings of a run, each with where it came from; the files looked at; warnings to show the user */
export interface ResolvedSkillSettings {
  values: SkillSettings;
  sources: Record<SettingKey, SettingSource>;
  /** the user file, then the project files from the repository root down to cwd (later ones win) */
  files: SettingsFileFound[];
  warnings: string[];
  /** whether the user approved this project (its root, and how), which lets its files loosen settings and start MCP servers */
  approval: ProjectApproval;
  /** the MCP servers of the settings files (user first, then project files farthest first), and the user's approval of the project's */
  mcp: {
    settings: Array<{ layer: SettingsLayer; path: string; servers: Record<string, McpServerConfig> }>;
    approval: McpProjectApproval;
    userPath: string;
  };
  /** the hooks that run: the user file's, then each approved project file's (an unapproved one's are left out, with a warning) */
  hooks: Array<{ layer: SettingsLayer; path: string; hooks: HooksSettings }>;
}

/** a layer's values, as the file schema types them; baseUrl by supplier; network.allowedDomains as allowedDomains; sandbox's
 *  mode, denyRead, allowUnixSockets, env.pass (passEnv) and env.mask (maskEnv) apart */
type LayerValues = Omit<SettingsFile, 'baseUrl' | 'network' | 'sandbox'> & {
  baseUrl?: Partial<Record<SettingsSupplier, { url: string; source: SettingSource }>>;
  allowedDomains?: string[];
  sandbox?: BashSandboxMode;
  denyRead?: string[];
  maskEnv?: Record<string, string[]>;
  allowUnixSockets?: string[];
  passEnv?: string[];
};

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/**
 * .what = the project settings files that apply to a directory: `.bhrain/settings.json` in it and in each parent up to
 *         the repository root (the nearest directory holding `.git`), farthest first; outside a repository, only its own
 * .why = a monorepo's package may refine the root's settings, as AGENTS.md files nest; a file above the repository
 *        (a home directory's) belongs to no project
 */
const findProjectSettingsPaths = async (cwd: string): Promise<string[]> => {
  const dirs: string[] = [];
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    dirs.push(dir);
    if (await exists(join(dir, '.git'))) return dirs.reverse().map((each) => join(each, PROJECT_CONFIG_PATHS.settings));
    if (dirname(dir) === dir) return [join(resolve(cwd), PROJECT_CONFIG_PATHS.settings)];
  }
};

/**
 * .what = a flag's or env var's text as a setting's value, checked by the setting's rule (checkSettingText)
 * .why = a flag is checked by the same rule as the settings file's value; the message names the flag (or variable), what
 *        it takes and what was given; an explained issue (a domain pattern's) is worded as is, after the flag's name
 */
const readSettingText = <K extends SettingKey>(key: K, given: string | string[], from: string): SkillSettings[K] => {
  const setting: SettingRow = SETTINGS[key];
  const checked = checkSettingText(setting.value, given);
  if (checked.ok) return checked.value as SkillSettings[K];
  if (checked.explained) throw new BadRequestError(`${from} ${checked.explained}`);
  const shown = Array.isArray(given) ? given.join(', ') : given;
  const near = setting.value.kind === 'enum' && typeof given === 'string' ? findNearestName(given, setting.value.values) : undefined;
  const message = setting.textError ? setting.textError(from, shown) : `${from} must be ${setting.expects}, got '${shown}'`;
  throw new BadRequestError(near ? `${message}. Did you mean '${near}'?` : message);
};

/** .what = the explicitly given flags as a layer: each checked by its setting's row, each error naming its flag */
const readFlagLayer = async (flags: SkillSettingsFlags): Promise<LayerValues> => {
  const layer: Record<string, unknown> = {};
  for (const key of SETTING_NAMES) {
    const given = flags[key];
    if (given === undefined) continue;
    const from = flagName(SETTINGS[key]);
    if (typeof given === 'boolean') layer[key] = given;
    else if (key === 'atom') {
      // genBrainAtom's own message, as a run without settings always gave it
      const wrong = await checkAtomSlug(given as string);
      if (wrong) throw new BadRequestError(wrong);
      layer.atom = given;
    }
    // --permission names a builtin guard or a rules file: resolvePermission reads and checks it
    else if (key === 'permission') layer.permission = given;
    // --base-url is every supplier's, checked once the atom (and so its supplier) is known
    else if (key === 'baseUrl')
      layer.baseUrl = Object.fromEntries(
        SETTINGS_SUPPLIERS.map((supplier) => [supplier, { url: given as string, source: 'flag' as const }]),
      );
    else layer[key] = readSettingText(key, given, from);
  }
  return layer as LayerValues;
};

/** .what = the env vars as a layer (an empty variable is unset); each bad value names its variable */
const readEnvLayer = async (env: Record<string, string | undefined>): Promise<LayerValues> => {
  const layer: LayerValues = {};
  const atom = env[SETTINGS_ENV_VARS.atom!];
  if (atom) {
    const wrong = await checkAtomSlug(atom);
    if (wrong) throw new BadRequestError(`${SETTINGS_ENV_VARS.atom}: ${wrong}`);
    layer.atom = atom;
  }
  const model = env[SETTINGS_ENV_VARS.model!];
  if (model) layer.model = readSettingText('model', model, SETTINGS_ENV_VARS.model!);
  const store = env[SETTINGS_ENV_VARS.store!];
  if (store) layer.store = readSettingText('store', store, SETTINGS_ENV_VARS.store!);
  layer.baseUrl = {};
  for (const supplier of SETTINGS_SUPPLIERS) {
    const name = BASE_URL_ENV_VARS[supplier];
    if (env[name]) layer.baseUrl[supplier] = { url: env[name]!, source: `env:${name}` };
  }
  return layer;
};

/** .what = a file's values as a layer, its base URLs tagged with the file, its sandbox split into mode, denyRead, allowUnixSockets, env.pass and env.mask */
const asFileLayer = ({ network, ...settings }: SettingsFile, source: SettingSource): LayerValues => ({
  ...settings,
  allowedDomains: network?.allowedDomains,
  sandbox: settings.sandbox?.mode,
  denyRead: settings.sandbox?.denyRead,
  maskEnv: settings.sandbox?.env?.mask,
  allowUnixSockets: settings.sandbox?.allowUnixSockets,
  passEnv: settings.sandbox?.env?.pass,
  baseUrl: settings.baseUrl
    ? Object.fromEntries(Object.entries(settings.baseUrl).map(([supplier, url]) => [supplier, { url: url!, source }]))
    : undefined,
});

/** .what = the MCP servers of the settings files (user first, then project files farthest first), and the user's approval of the project's */
const mcpSettingsOf = (input: {
  user: SettingsFile | null;
  userPath: string;
  projects: ReadonlyArray<SettingsFile | null>;
  projectPaths: readonly string[];
  approval: ProjectApproval;
}): ResolvedSkillSettings['mcp'] => {
  const { user, userPath, projects, projectPaths, approval } = input;
  return {
    settings: [
      ...(user?.mcpServers ? [{ layer: 'user' as const, path: userPath, servers: user.mcpServers }] : []),
      ...projectPaths.flatMap((path, index) =>
        projects[index]?.mcpServers ? [{ layer: 'project' as const, path, servers: projects[index]!.mcpServers! }] : [],
      ),
    ],
    approval: {
      trusted: approval.trusted,
      enableAllProjectMcpServers: user?.enableAllProjectMcpServers ?? false,
      enabledMcpjsonServers: user?.enabledMcpjsonServers ?? [],
    },
    userPath,
  };
};

/**
 * .what = the hooks of a run's settings files: the user file's, then each project file's once the user approved the
 *         project; an unapproved project file's hooks are left out, with a warning saying how to approve
 * .why = a project's hooks run commands outside the sandbox: only the user may let them, as for its MCP servers
 */
const resolveHookSettings = (
  input: {
    user: SettingsFile | null;
    userPath: string;
    projects: ReadonlyArray<SettingsFile | null>;
    projectPaths: readonly string[];
    approval: ProjectApproval;
    howToApprove: string;
  },
  warnings: string[],
): ResolvedSkillSettings['hooks'] => {
  const { user, userPath, projects, projectPaths, approval } = input;
  return [
    ...(user?.hooks ? [{ layer: 'user' as const, path: userPath, hooks: user.hooks }] : []),
    ...projectPaths.flatMap((path, index) => {
      const given = projects[index]?.hooks;
      if (!given || !Object.values(given).some((groups) => groups?.length)) return [];
      if (approval.trusted) {
        warnings.push(`"hooks" from ${path} run commands outside bhrain's sandbox; this project is approved (${approval.via})`);
        return [{ layer: 'project' as const, path, hooks: given }];
      }
      warnings.push(
        `ignored "hooks" from ${path}: a project file's hooks run commands outside bhrain's sandbox, so they run only with your approval. To use them, ${input.howToApprove}`,
      );
      return [];
    }),
  ];
};

/**
 * .what = allowUnixSockets where it does nothing (the sandbox off: a warning), or beside the host's network, which would
 *         open every abstract socket of the host too, which no file hides (refused: a BadRequestError)
 */
const checkAllowedUnixSockets = (values: SkillSettings, sources: Record<SettingKey, SettingSource>, warnings: string[]): void => {
  const socketsFrom = nameSettingOrigin('allowUnixSockets', sources.allowUnixSockets);
  if (values.allowUnixSockets.length && values.sandbox === 'off')
    warnings.push(`${socketsFrom} has no effect with the sandbox off: bash runs unconfined and reaches every socket`);
  // the host's network would open every abstract socket of the host too, which no file hides: refused, not warned
  else if (values.allowUnixSockets.length && values.allowNetwork)
    throw new BadRequestError(
      `${socketsFrom} cannot go with allowNetwork (${nameSettingOrigin('allowNetwork', sources.allowNetwork)}): with the host's network, bash would also reach every abstract unix socket of the host (an X server's, a D-Bus bus), which no file hides. Allow the hosts bash needs by name instead (--allow-domain), or leave allowUnixSockets out`,
    );
};

/**
 * .what = what ask fixes, whatever the flags and files say: the read-only guard and sandbox, no network, so no masked
 *         value (nothing to write one into; what bash gets of the variable is the environment's rule), no host socket
 */
const fixForAsk = (values: SkillSettings, sources: Record<SettingKey, SettingSource>, sandboxFlagged: boolean): void => {
  Object.assign(values, {
    permission: 'readOnly',
    sandbox: 'read-only',
    allowNetwork: false,
    allowedDomains: [],
    maskEnv: {},
    allowUnixSockets: [],
  });
  for (const key of ['permission', 'allowNetwork', 'allowedDomains', 'maskEnv', 'allowUnixSockets'] as const) sources[key] = 'default';
  sources.sandbox = sandboxFlagged ? 'flag' : 'default';
};

/**
 * .what = refuses an ask flag that ask cannot honour: a sandbox other than read-only, a permission other than readOnly
 * .why = ask is always read-only; a flag it would drop unseen is a mistake the user should hear about (exit 2)
 */
const refuseAskLoosening = (flags: SkillSettingsFlags): void => {
  if (typeof flags.sandbox === 'string' && flags.sandbox !== 'read-only')
    throw new BadRequestError(`ask is always read-only: --sandbox ${flags.sandbox} is not allowed (omit it, or pass --sandbox read-only)`);
  if (typeof flags.permission === 'string' && flags.permission !== 'readOnly')
    throw new BadRequestError(
      `ask is always read-only: --permission ${flags.permission} is not allowed (omit it, or pass --permission readOnly; act takes a permission)`,
    );
};

/**
 * .what = the atom of a run that names none: the first supplier of the supplier table (claude, qwen, openai) whose key
 *         variable is set, its source being that variable; none set, none
 * .why = a user with one key set should not have to say which supplier it is for; the order is the table's, and the
 *        run says on stderr which it chose and why
 */
const pickAtomByKey = (env: Record<string, string | undefined>, sources: Record<SettingKey, SettingSource>): string | undefined => {
  for (const row of SUPPLIER_TABLE) {
    const set = credentialEnvVarsOf(row).find((name) => env[name]);
    if (!set) continue;
    sources.atom = `env:${set}`;
    return row.slugPrefix;
  }
  return undefined;
};

/** .what = what ask fixes: the sandbox, the network, the guard and what reaches past them; nothing a project gives for them applies */
const FIXED_BY_ASK: ReadonlyArray<keyof typeof LOOSENING> = [
  'sandbox',
  'allowNetwork',
  'permission',
  'allowedDomains',
  'maskEnv',
  'allowUnixSockets',
];

/**
 * .what = the settings of a skill run from every layer, highest first: flags > env > project > user > defaults; each
 *         value with its source. `flags` holds only the flags given explicitly (see pickExplicitFlags)
 * .why = one resolution behind `bhrain act|ask` and `bhrain config`, so what config prints is what a run uses. Every
 *        file that exists is validated in full, even where a higher layer overrides it: a bad file is never ignored
 * .note = ask is always read-only: its permission, sandbox and network are fixed, and only `--sandbox read-only` is
 *         accepted. baseUrl follows the atom's supplier: --base-url, then the supplier table's URL variable, then the
 *         user file's `baseUrl.<supplier>`. A project file may tighten the sandbox, the network and the guard, never
 *         loosen them unless the user approved the project (--trust-project, or `trustedProjects` in the user file):
 *         a loosening value is replaced by the one that applies without it, and a warning names the key and how to approve
 */
export const resolveSkillSettings = async (
  input: { skill?: SkillName; flags?: SkillSettingsFlags; cwd: string; trustProject?: boolean },
  context: { env?: Record<string, string | undefined> } = {},
): Promise<ResolvedSkillSettings> => {
  const env = context.env ?? process.env;
  const skill = input.skill ?? 'act';
  const userPath = resolve(getBhrainConfigDir(env), SETTINGS_FILE_NAME);
  // the user's own file is the user layer even when a project would also find it (BHRAIN_CONFIG_DIR=<repo>/.bhrain)
  const projectPaths = (await findProjectSettingsPaths(input.cwd)).filter((path) => path !== userPath);
  const user = await readSettingsFile({ path: userPath, layer: 'user' });
  const projects = await Promise.all(projectPaths.map((path) => readSettingsFile({ path, layer: 'project' })));
  const files: SettingsFileFound[] = [
    { layer: 'user', path: userPath, found: !!user },
    ...projectPaths.map((path, index) => ({ layer: 'project' as const, path, found: !!projects[index] })),
  ];
  // highest first: the nearest project file beats the ones above it
  const layers: Array<{ source: SettingSource; values: LayerValues }> = [
    { source: 'flag', values: await readFlagLayer(input.flags ?? {}) },
    { source: `env:${Object.values(SETTINGS_ENV_VARS).join('/')}`, values: await readEnvLayer(env) },
    ...projectPaths
      .map((path, index) => ({ path, settings: projects[index] }))
      .reverse()
      .filter((each) => each.settings)
      .map(({ path, settings }) => ({ source: `project:${path}` as const, values: asFileLayer(settings!, `project:${path}`) })),
    ...(user ? [{ source: `user:${userPath}` as const, values: asFileLayer(user, `user:${userPath}`) }] : []),
  ];
  const sources = {} as Record<SettingKey, SettingSource>;
  /** a key's value from the first of the layers that gives it, else the fallback; an env layer names its one variable */
  const pickFrom = <K extends Exclude<SettingKey, 'baseUrl' | 'denyRead'>>(from: typeof layers, key: K, fallback: SkillSettings[K]) => {
    const layer = from.find((each) => each.values[key] !== undefined);
    const source: SettingSource = !layer ? 'default' : layer.source.startsWith('env:') ? `env:${SETTINGS_ENV_VARS[key]}` : layer.source;
    return { value: layer ? (layer.values[key] as SkillSettings[K]) : fallback, source };
  };
  const pick = <K extends Exclude<SettingKey, 'baseUrl' | 'denyRead'>>(key: K, fallback: SkillSettings[K]): SkillSettings[K] => {
    const { value, source } = pickFrom(layers, key, fallback);
    sources[key] = source;
    return value;
  };

  const atom = pick('atom', SETTINGS.atom.default) ?? pickAtomByKey(env, sources);
  const supplier = atom?.split('/')[0] as SettingsSupplier | undefined;
  const baseUrlLayer = supplier ? layers.find((each) => each.values.baseUrl?.[supplier]) : undefined;
  const baseUrl = baseUrlLayer ? baseUrlLayer.values.baseUrl![supplier!]! : undefined;
  sources.baseUrl = baseUrl?.source ?? 'default';
  if (baseUrl && !isHttpUrl(baseUrl.url))
    throw new BadRequestError(
      `${baseUrl.source === 'flag' ? '--base-url' : baseUrl.source.replace(/^env:/, '')} '${baseUrl.url}' is not an http(s) URL: give the supplier's base URL, e.g. http://localhost:8000/v1`,
    );

  // every layer's paths together, not the first layer's: a path hidden only hides more, so no layer can unhide another's
  const denyReadLayers = layers.filter((layer) => layer.values.denyRead?.length);
  sources.denyRead = denyReadLayers.length ? (denyReadLayers.map((layer) => layer.source).join(', ') as SettingSource) : 'default';
  // refused calls, like hidden paths, add up over the layers: a flag or a project adds refusals, never lifts the user's
  const disallowedLayers = layers.filter((layer) => layer.values.disallowedTools?.length);
  sources.disallowedTools = disallowedLayers.length
    ? (disallowedLayers.map((layer) => layer.source).join(', ') as SettingSource)
    : 'default';
  const flagSandbox = input.flags?.sandbox;
  if (skill === 'ask') refuseAskLoosening(input.flags ?? {});
  const values: SkillSettings = {
    atom,
    model: pick('model', SETTINGS.model.default),
    baseUrl: baseUrl?.url,
    permission: pick('permission', SETTINGS.permission.default),
    allowedTools: [...new Set(pick('allowedTools', SETTINGS.allowedTools.default))],
    disallowedTools: [...new Set(disallowedLayers.flatMap((layer) => layer.values.disallowedTools!))],
    additionalDirectories: [...new Set(pick('additionalDirectories', SETTINGS.additionalDirectories.default))],
    checkpoints: pick('checkpoints', SETTINGS.checkpoints.default),
    checkpointIgnoredMaxBytes: pick('checkpointIgnoredMaxBytes', SETTINGS.checkpointIgnoredMaxBytes.default),
    sandbox: pick('sandbox', SETTINGS.sandbox.default),
    denyRead: [...new Set(denyReadLayers.flatMap((layer) => layer.values.denyRead!))],
    allowUnixSockets: [...new Set(pick('allowUnixSockets', SETTINGS.allowUnixSockets.default))],
    allowNetwork: pick('allowNetwork', SETTINGS.allowNetwork.default),
    allowedDomains: [...new Set(pick('allowedDomains', SETTINGS.allowedDomains.default).map(normalizeDomainPattern))],
    maskEnv: pick('maskEnv', SETTINGS.maskEnv.default),
    passEnv: [...new Set(pick('passEnv', SETTINGS.passEnv.default))],
    maxIterations: pick('maxIterations', SETTINGS.maxIterations.default),
    memory: pick('memory', SETTINGS.memory.default),
    timeoutMs: pick('timeoutMs', SETTINGS.timeoutMs.default),
    maxBudgetUsd: pick('maxBudgetUsd', SETTINGS.maxBudgetUsd.default),
    maxTokens: pick('maxTokens', SETTINGS.maxTokens.default),
    maxWallTime: pick('maxWallTime', SETTINGS.maxWallTime.default),
    projectInstructions: pick('projectInstructions', SETTINGS.projectInstructions.default),
    skills: pick('skills', SETTINGS.skills.default),
    systemPrompt: pick('systemPrompt', SETTINGS.systemPrompt.default),
    appendSystemPrompt: pick('appendSystemPrompt', SETTINGS.appendSystemPrompt.default),
    store: pick('store', SETTINGS.store.default),
  };
  // ask changes nothing: a directory to change is act's
  if (skill === 'ask') values.additionalDirectories = [];
  // a project may tighten, never loosen, without the user's approval: a loosening value falls back to what applies
  // without any project file; an approved one is still worth a line, since the user may not have read the file
  const warnings: string[] = [];
  const approval = await resolveProjectApproval(
    {
      root: (await findRepoRoot({ cwd: input.cwd })) ?? input.cwd,
      trustProject: !!input.trustProject,
      trustedProjects: user?.trustedProjects ?? [],
    },
    { env },
  );
  const howToApprove = `approve this project with --trust-project, or add "${approval.root}" to "trustedProjects" in ${userPath}`;
  const withoutProjects = layers.filter((layer) => !layer.source.startsWith('project:'));
  const defaults = Object.fromEntries((Object.keys(LOOSENING) as Array<keyof typeof LOOSENING>).map((key) => [key, SETTINGS[key].default]));
  for (const key of (Object.keys(LOOSENING) as Array<keyof typeof LOOSENING>).filter(
    (each) => skill !== 'ask' || !FIXED_BY_ASK.includes(each),
  )) {
    if (!sources[key].startsWith('project:')) continue;
    const file = sources[key].slice('project:'.length);
    const picked = pickFrom(withoutProjects, key, defaults[key]);
    const fallback =
      key === 'allowedDomains' ? { ...picked, value: [...new Set((picked.value as string[]).map(normalizeDomainPattern))] } : picked;
    if (!(LOOSENING[key] as (value: unknown, than: unknown) => boolean)(values[key], fallback.value)) continue;
    const name = settingFileKey(key);
    const shown = JSON.stringify(values[key]);
    if (approval.trusted)
      warnings.push(
        `"${name}": ${shown} comes from ${file}, which loosens bhrain's confinement; this project is approved (${approval.via})`,
      );
    else {
      warnings.push(
        `ignored "${name}": ${shown} from ${file}: a project file may tighten bhrain's confinement, not loosen it without your approval; ${name} is ${JSON.stringify(fallback.value)} (${fallback.source}). To use it, ${howToApprove}`,
      );
      Object.assign(values, { [key]: fallback.value });
      sources[key] = fallback.source;
    }
  }
  // read-only permission implies a read-only sandbox, unless a sandbox was chosen
  if (sources.sandbox === 'default' && values.permission === 'readOnly') values.sandbox = 'read-only';
  if (skill === 'ask') fixForAsk(values, sources, typeof flagSandbox === 'string');

  const domainsFrom = nameSettingOrigin('allowedDomains', sources.allowedDomains);
  // where the network is all on, or bash unconfined, they narrow nothing: said, not silent
  if (values.allowedDomains.length && values.sandbox === 'off')
    warnings.push(`${domainsFrom} has no effect with the sandbox off: bash runs unconfined and reaches every host`);
  else if (values.allowedDomains.length && values.allowNetwork)
    warnings.push(`${domainsFrom} has no effect with allowNetwork (--allow-network): bash reaches every host`);
  checkAllowedUnixSockets(values, sources, warnings);
  const mcp = mcpSettingsOf({ user, userPath, projects, projectPaths, approval });
  const hooks = resolveHookSettings({ user, userPath, projects, projectPaths, approval, howToApprove }, warnings);
  return { values, sources, files, warnings, approval, mcp, hooks };
};
