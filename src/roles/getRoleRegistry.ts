import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** .what = a rhachet role: its readme, briefs and skills, by uri */
export interface RoleDeclaration {
  slug: string;
  name: string;
  purpose: string;
  readme: { uri: string };
  briefs: { dirs: Array<{ uri: string }> };
  skills: { dirs: Array<{ uri: string }>; refs: never[] };
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
 * .why = rhachet discovers roles through it; it mirrors rhachet.repo.yml with absolute uris
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
      briefs: { dirs: [{ uri: join(root, 'src', 'roles', 'brain', 'briefs') }] },
      skills: { dirs: [{ uri: join(root, 'src', 'roles', 'brain', 'skills') }], refs: [] },
    },
  ],
});
