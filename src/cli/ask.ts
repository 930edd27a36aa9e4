// the rhachet skill entry `ask`: src/roles/brain/skills/ask.sh execs its bundle (dist/bundle/ask.js) with rhachet's arguments
import './enableCompileCache.js';
import { genSkillCommand } from './genSkillCommand.js';
import { parseSkillArgv, runSkillLazily } from './runSkillEntry.js';

await parseSkillArgv(genSkillCommand('ask', runSkillLazily), process.argv);
