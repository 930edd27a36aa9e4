import { stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

import { DEFAULT_BASH_SANDBOX_MODE, DEFAULT_MAX_ITERATIONS, MAX_ITERATIONS_LIMIT } from '../../agent/constants.js';
import { getBhrainConfigDir } from '../../agent/instructions/getBhrainConfigDir.js';
import { BASH_SANDBOX_MODES, isBashSandboxMode, type BashSandboxMode } from '../../sandbox/BashSandbox.js';
import { checkDomainPattern, normalizeDomainPattern } from '../../sandbox/network/allowedDomains.js';
import type { McpServerConfig } from '../../agent/tools/mcp/genMcpToolBox.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { findRepoRoot } from '../../agent/instructions/findRepoRoot.js';
import type { McpProjectApproval } from '../mcp/resolveMcpServers.js';
import type { SkillName } from '../genSkillCommand.js';
import { checkAtomSlug, readSettingsFile, type SettingsFile, type SettingsLayer } from './readSettingsFile.js';
import { LOOSENING, resolveProjectApproval, type ProjectApproval } from './resolveProjectApproval.js';
import {
  BASE_URL_ENV_VARS,
  isHttpUrl,
  MEMORY_STRATEGIES,
  nameSettingOrigin,
  settingFileKey,
  parseDurationMs,
  SETTING_KEYS,
  SETTINGS_SUPPLIERS,
  type MemoryStrategy,
  type SettingKey,
  type SettingSource,
  type SettingsSupplier,
  type SkillSettings,
  type SkillSettingsFlags,
} from './SkillSettings.js';

/** .what = the env vars that give a setting, beside ANTHROPIC_BASE_URL / QWEN_BASE_URL for baseUrl */
export const SETTINGS_ENV_VARS: Partial<Record<SettingKey, string>> = { atom: 'BHRAIN_ATOM', model: 'BHRAIN_MODEL' };

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
}

/** a layer's values, as the file schema types them; baseUrl by supplier; network.allowedDomains as allowedDomains; sandbox's
 *  mode and denyRead apart */
type LayerValues = Omit<SettingsFile, 'baseUrl' | 'network' | 'sandbox'> & {
  baseUrl?: Partial<Record<SettingsSupplier, { url: string; source: SettingSource }>>;
  allowedDomains?: string[];
  sandbox?: BashSandboxMode;
  denyRead?: string[];
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
    if (await exists(join(dir, '.git'))) return dirs.reverse().map((each) => join(each, '.bhrain', SETTINGS_FILE_NAME));
    if (dirname(dir) === dir) return [join(resolve(cwd), '.bhrain', SETTINGS_FILE_NAME)];
  }
};

/** .what = a number flag checked as runSkill always checked it: the message names the flag and what it takes */
const readNumberFlag = (key: SettingKey, value: string, check: { integer?: boolean; min: number; max?: number }): number => {
  const number = Number(value);
  if (!Number.isFinite(number) || number < check.min || number > (check.max ?? Infinity) || (check.integer && !Number.isInteger(number)))
    throw new BadRequestError(`${SETTING_KEYS[key].flag} must be ${SETTING_KEYS[key].expects}, got '${value}'`);
  return number;
};

/** .what = the explicitly given flags as a layer: strings parsed and checked, each error naming its flag */
const readFlagLayer = async (flags: SkillSettingsFlags): Promise<LayerValues> => {
  const text = (key: SettingKey) => (typeof flags[key] === 'string' ? (flags[key] as string) : undefined);
  const layer: LayerValues = {};
  if (text('atom') !== undefined) {
    // genBrainAtom's own message, as a run without settings always gave it
    const wrong = await checkAtomSlug(text('atom')!);
    if (wrong) throw new BadRequestError(wrong);
    layer.atom = text('atom');
  }
  if (text('model') !== undefined) {
    if (!/^\S+$/.test(text('model')!))
      throw new BadRequestError(`--model '${text('model')}' is not a model id: ${SETTING_KEYS.model.expects}`);
    layer.model = text('model');
  }
  if (text('baseUrl') !== undefined)
    layer.baseUrl = Object.fromEntries(
      SETTINGS_SUPPLIERS.map((supplier) => [supplier, { url: text('baseUrl')!, source: 'flag' as const }]),
    );
  if (text('permission') !== undefined) layer.permission = text('permission');
  const sandbox = text('sandbox');
  if (sandbox !== undefined) {
    if (!isBashSandboxMode(sandbox))
      throw new BadRequestError(`unknown --sandbox '${sandbox}': choose one of ${BASH_SANDBOX_MODES.join(', ')}`);
    layer.sandbox = sandbox;
  }
  if (flags.allowNetwork !== undefined) layer.allowNetwork = !!flags.allowNetwork;
  if (Array.isArray(flags.allowedDomains))
    layer.allowedDomains = flags.allowedDomains.map((pattern) => {
      const wrong = checkDomainPattern(pattern);
      if (wrong) throw new BadRequestError(`--allow-domain ${wrong}`);
      return pattern;
    });
  const memory = text('memory');
  if (memory !== undefined) {
    if (!MEMORY_STRATEGIES.includes(memory as MemoryStrategy))
      throw new BadRequestError(`unknown --memory '${memory}': choose ${MEMORY_STRATEGIES.join(' or ')}`);
    layer.memory = memory as MemoryStrategy;
  }
  if (text('maxIterations') !== undefined)
    layer.maxIterations = readNumberFlag('maxIterations', text('maxIterations')!, { integer: true, min: 1, max: MAX_ITERATIONS_LIMIT });
  if (text('timeoutMs') !== undefined) layer.timeoutMs = readNumberFlag('timeoutMs', text('timeoutMs')!, { integer: true, min: 1 });
  if (text('maxBudgetUsd') !== undefined)
    layer.maxBudgetUsd = readNumberFlag('maxBudgetUsd', text('maxBudgetUsd')!, { min: Number.MIN_VALUE });
  if (text('maxTokens') !== undefined) layer.maxTokens = readNumberFlag('maxTokens', text('maxTokens')!, { integer: true, min: 1 });
  const wallTime = text('maxWallTime');
  if (wallTime !== undefined) {
    const ms = parseDurationMs(wallTime);
    if (ms === null) throw new BadRequestError(`--max-wall-time must be a duration such as 90s, 10m, 1h or 1500ms, got '${wallTime}'`);
    layer.maxWallTime = ms;
  }
  if (flags.projectInstructions !== undefined) layer.projectInstructions = !!flags.projectInstructions;
  if (text('appendSystemPrompt') !== undefined) layer.appendSystemPrompt = text('appendSystemPrompt');
  return layer;
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
  if (model) {
    if (!/^\S+$/.test(model))
      throw new BadRequestError(`${SETTINGS_ENV_VARS.model} '${model}' is not a model id: ${SETTING_KEYS.model.expects}`);
    layer.model = model;
  }
  layer.baseUrl = {};
  for (const supplier of SETTINGS_SUPPLIERS) {
    const name = BASE_URL_ENV_VARS[supplier];
    if (env[name]) layer.baseUrl[supplier] = { url: env[name]!, source: `env:${name}` };
  }
  return layer;
};

/** .what = a file's values as a layer, its base URLs tagged with the file, its sandbox split into mode and denyRead */
const asFileLayer = ({ network, ...settings }: SettingsFile, source: SettingSource): LayerValues => ({
  ...settings,
  allowedDomains: network?.allowedDomains,
  sandbox: settings.sandbox?.mode,
  denyRead: settings.sandbox?.denyRead,
  baseUrl: settings.baseUrl
    ? Object.fromEntries(Object.entries(settings.baseUrl).map(([supplier, url]) => [supplier, { url: url!, source }]))
    : undefined,
});

/**
 * .what = the settings of a skill run from every layer, highest first: flags > env > project > user > defaults; each
 *         value with its source. `flags` holds only the flags given explicitly (see pickExplicitFlags)
 * .why = one resolution behind `bhrain act|ask` and `bhrain config`, so what config prints is what a run uses. Every
 *        file that exists is validated in full, even where a higher layer overrides it: a bad file is never ignored
 * .note = ask is always read-only: its permission, sandbox and network are fixed, and only `--sandbox read-only` is
 *         accepted. baseUrl follows the atom's supplier: --base-url, then ANTHROPIC_BASE_URL / QWEN_BASE_URL, then the
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

  const atom = pick('atom', undefined);
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
  const flagSandbox = input.flags?.sandbox;
  if (skill === 'ask' && typeof flagSandbox === 'string' && flagSandbox !== 'read-only')
    throw new BadRequestError(`ask is always read-only: --sandbox ${flagSandbox} is not allowed (omit it, or pass --sandbox read-only)`);
  const values: SkillSettings = {
    atom,
    model: pick('model', undefined),
    baseUrl: baseUrl?.url,
    permission: pick('permission', 'allowAll'),
    sandbox: pick('sandbox', DEFAULT_BASH_SANDBOX_MODE),
    denyRead: [...new Set(denyReadLayers.flatMap((layer) => layer.values.denyRead!))],
    allowNetwork: pick('allowNetwork', false),
    allowedDomains: [...new Set(pick('allowedDomains', []).map(normalizeDomainPattern))],
    maxIterations: pick('maxIterations', DEFAULT_MAX_ITERATIONS),
    memory: pick('memory', MEMORY_STRATEGIES[0]),
    timeoutMs: pick('timeoutMs', undefined),
    maxBudgetUsd: pick('maxBudgetUsd', undefined),
    maxTokens: pick('maxTokens', undefined),
    maxWallTime: pick('maxWallTime', undefined),
    projectInstructions: pick('projectInstructions', true),
    appendSystemPrompt: pick('appendSystemPrompt', undefined),
  };
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
  const defaults = { sandbox: DEFAULT_BASH_SANDBOX_MODE, allowNetwork: false, permission: 'allowAll', allowedDomains: [] as string[] };
  // ask fixes them all: nothing a project gives for them applies
  for (const key of skill === 'ask' ? [] : (Object.keys(LOOSENING) as Array<keyof typeof LOOSENING>)) {
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
  if (skill === 'ask') {
    values.permission = 'readOnly';
    values.sandbox = 'read-only';
    values.allowNetwork = false;
    values.allowedDomains = [];
    sources.permission = 'default';
    sources.sandbox = typeof flagSandbox === 'string' ? 'flag' : 'default';
    sources.allowNetwork = 'default';
    sources.allowedDomains = 'default';
  }

  const domainsFrom = nameSettingOrigin('allowedDomains', sources.allowedDomains);
  // where the network is all on, or bash unconfined, they narrow nothing: said, not silent
  if (values.allowedDomains.length && values.sandbox === 'off')
    warnings.push(`${domainsFrom} has no effect with the sandbox off: bash runs unconfined and reaches every host`);
  else if (values.allowedDomains.length && values.allowNetwork)
    warnings.push(`${domainsFrom} has no effect with allowNetwork (--allow-network): bash reaches every host`);
  const mcp = {
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
  return { values, sources, files, warnings, approval, mcp };
};
