import { access, constants, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { getRoleRegistry } from './getRoleRegistry.js';

const root = join(import.meta.dirname, '..', '..');

describe('the rhachet registry', () => {
  it('getRoleRegistry names slug bhrain and role brain, and every uri it gives exists', async () => {
    const registry = getRoleRegistry();
    expect(registry.slug).toBe('bhrain');
    expect(registry.roles.map((role) => role.slug)).toEqual(['brain']);
    const [brain] = registry.roles;
    for (const uri of [
      registry.readme.uri,
      brain.readme.uri,
      ...brain.briefs.dirs.map((dir) => dir.uri),
      ...brain.skills.dirs.map((dir) => dir.uri),
    ])
      await expect(access(uri)).resolves.toBeUndefined();
    for (const skill of ['act.sh', 'ask.sh'])
      await expect(access(join(brain.skills.dirs[0].uri, skill), constants.X_OK)).resolves.toBeUndefined();
  });

  it('rhachet.repo.yml declares the same role with paths that exist in the package', async () => {
    const manifest = await readFile(join(root, 'rhachet.repo.yml'), 'utf8');
    expect(manifest).toMatch(/^slug: bhrain$/m);
    expect(manifest).toMatch(/- slug: brain$/m);
    const paths = [...manifest.matchAll(/(?:readme|dirs): (\S+)/g)].map((match) => match[1]);
    expect(paths).toEqual(['readme.md', 'src/roles/brain/readme.md', 'src/roles/brain/briefs', 'src/roles/brain/skills']);
    for (const path of paths) await expect(access(join(root, path))).resolves.toBeUndefined();
  });
});
