// the rhachet skill entry `act`: src/roles/brain/skills/act.sh execs its bundle (dist/bundle/act.js) with rhachet's arguments
import './enableCompileCache.js';
import { genSkillCommand } from './genSkillCommand.js';
import { parseSkillArgv, runSkillLazily } from './runSkillEntry.js';

await parseSkillArgv(genSkillCommand('act', runSkillLazily), process.argv);
