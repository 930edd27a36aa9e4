// the rhachet skill entry `ask`: src/roles/brain/skills/ask.sh execs this with rhachet's argument list
import { genSkillCommand } from './genSkillCommand.js';
import { parseSkillArgv, runSkillLazily } from './runSkillEntry.js';

await parseSkillArgv(genSkillCommand('ask', runSkillLazily), process.argv);
