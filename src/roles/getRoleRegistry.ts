import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** .what = a command rhachet runs for a brain's event (e.g. onBoot: when a Claude Code session starts), with its time limit */
export interface RoleHookOnBrain {
  command: string;
  /** an ISO 8601 duration, e.g. PT60S */
  timeout: string;
}

/**
 * .what = a rhachet role, in rhachet v1.45.2's `Role` shape: its readme, traits, briefs, skills and brain hooks, by uri
 * .note = `traits` holds rhachet-artifact objects in rhachet's own roles; this role has none, so it is an empty list
 */
export interface RoleDeclaration {
  slug: string;
  name: string;
  purpose: string;
  readme: { uri: string };
  traits: never[];
  briefs: { dirs: Array<{ uri: string }> };
  skills: { dirs: Array<{ uri: string }>; refs: never[] };
  hooks: { onBrain: { onBoot: RoleHookOnBrain[] } };
}

/** .what = a rhachet role registry: this package's slug and its roles */
export interface RoleRegistryDeclaration {
  slug: string;
  readme: { uri: string };
  roles: RoleDeclaration[];
}

/** the package root: dist/roles/ is two levels below it */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * .what = the rhachet registry of this package (slug `bhrain`), in rhachet's RoleRegistry shape
 * .why = rhachet reads it to apply a role's hooks (`rhachet init --hooks`) and to write rhachet.repo.yml (`rhachet repo
 *        introspect`), which requires a role with briefs or skills to boot them: its onBoot hook runs `rhachet roles
 *        boot --role brain` from the consumer's node_modules (introspect refuses npx in hooks)
 */
export const getRoleRegistry = (): RoleRegistryDeclaration => ({
  slug: 'bhrain',
  readme: { uri: join(root, 'readme.md') },
  roles: [
    {
      slug: 'brain',
      name: 'brain',
      purpose: 'run an agentic loop you control: act on tasks with full tools, ask with read-only tools',
      readme: { uri: join(root, 'src', 'roles', 'brain', 'readme.md') },
      traits: [],
      briefs: { dirs: [{ uri: join(root, 'src', 'roles', 'brain', 'briefs') }] },
      skills: { dirs: [{ uri: join(root, 'src', 'roles', 'brain', 'skills') }], refs: [] },
      hooks: { onBrain: { onBoot: [{ command: './node_modules/.bin/rhachet roles boot --role brain', timeout: 'PT60S' }] } },
    },
  ],
});
