// imported first by each CLI entry (bhrain, and rhachet's act and ask): from here on V8 keeps the code it compiles in the
// user's own cache dir (node 22.1+; older nodes have no compile cache), so the chunks a run loads next (the loop, zod,
// the SDK) start from cached code on the next run. The dir is the user's, not a /tmp shared with other users
import module from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';

const { enableCompileCache } = module as { enableCompileCache?: (directory: string) => unknown };
if (enableCompileCache && !process.env.NODE_DISABLE_COMPILE_CACHE)
  enableCompileCache(join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'bhrain', 'compile-cache'));
