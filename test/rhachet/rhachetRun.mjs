// `rhachet run [--repo R] [--role X] --skill S ...` as rhachet v1.45.2 runs a skill, written from its source as facts
// (ehmpathy/rhachet@60ae13c: src/contract/cli/invokeRun.ts, src/domain.operations/invoke/{executeSkill,
// discoverSkillExecutables,findUniqueSkillExecutable}.ts, src/infra/filesystem/getAllFilesFromDir.ts). It is a process of
// its own because rhachet blocks in spawnSync while the skill runs; argv is the argv after `run`, as rhachet reads it
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';

const args = process.argv.slice(2);

/** the value of one of run's own options, which rhachet parses before the first option it does not know */
const optionOf = (name) => {
  for (let index = 0; index < args.length; index++) {
    if (args[index] === name) return args[index + 1];
    if (!args[index].startsWith('-')) return undefined;
    if (!['--repo', '--role', '-r', '--skill', '-s'].includes(args[index])) return undefined;
    index++;
  }
  return undefined;
};

/** every file under a directory, following symlinks (statSync), skipping broken ones */
const filesUnder = (dir) => {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((entry) => {
    const path = resolve(dir, entry);
    let stats;
    try {
      stats = statSync(path);
    } catch (error) {
      if (error.code === 'ENOENT') return [];
      throw error;
    }
    return stats.isDirectory() ? filesUnder(path) : stats.isFile() ? [path] : [];
  });
};

const slugRepo = optionOf('--repo');
const slugRole = optionOf('--role') ?? optionOf('-r');
const slugSkill = optionOf('--skill') ?? optionOf('-s');
if (!slugSkill) {
  console.error('--skill or --init is required (e.g., --skill test.speed or --init setup.claude)');
  process.exit(1);
}

// discovery reads .agent/ under the working directory only
const agentDir = resolve(process.cwd(), '.agent');
const skills = [];
for (const repoEntry of existsSync(agentDir) ? readdirSync(agentDir).filter((entry) => entry.startsWith('repo=')) : []) {
  const repo = repoEntry.replace('repo=', '');
  if (slugRepo && repo !== slugRepo) continue;
  for (const roleEntry of readdirSync(resolve(agentDir, repoEntry)).filter((entry) => entry.startsWith('role='))) {
    const role = roleEntry.replace('role=', '');
    if (slugRole && role !== slugRole) continue;
    for (const path of filesUnder(resolve(agentDir, repoEntry, roleEntry, 'skills'))) {
      const slug = basename(path).replace(/\.sh$/, '');
      if (slug === slugSkill) skills.push({ slug, path, repo, role });
    }
  }
}
if (skills.length !== 1) {
  console.error(skills.length ? `multiple skills found for "${slugSkill}"` : `no skill "${slugSkill}" found in any linked role`);
  process.exit(1);
}
const [skill] = skills;
const header = `🪨 run solid skill repo=${skill.repo}/role=${skill.role}/skill=${skill.slug}`;
console.log('');
console.log(header);
console.log('');

// the path and every argument after `run`, single-quoted unless made of [A-Za-z0-9_-./:@=] only, run by /bin/bash
const command = [skill.path, ...args]
  .map((arg) => (/^[a-zA-Z0-9_\-./:@=]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`))
  .join(' ');
// stdin and stdout are rhachet's own; stderr is buffered (spawnSync's default maxBuffer, 1 MiB) and shown only on failure
const result = spawnSync(command, [], {
  cwd: process.cwd(),
  shell: '/bin/bash',
  encoding: 'utf-8',
  stdio: [process.stdin, process.stdout, 'pipe'],
});
if (result.status !== 0) {
  const exitCode = result.status ?? 1;
  console.error('');
  console.error(header);
  console.error(exitCode === 2 ? '   └─ ✋ blocked by constraints' : '   └─ 💥 failed with an error');
  console.error('');
  const stderr = result.stderr?.trim();
  if (stderr) console.error(stderr);
  process.exit(exitCode);
}
