// the rhachet skill entry `act`: src/roles/brain/skills/act.sh execs this with rhachet's argument list
import { genSkillCommand } from './genSkillCommand.js';
import { parseSkillArgv, runSkillLazily } from './runSkillEntry.js';

await parseSkillArgv(genSkillCommand('act', runSkillLazily), process.argv);
