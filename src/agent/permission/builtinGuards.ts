import type { BhrainPermissionGuard } from './BhrainPermissionGuard.js';

/** tools that only observe: they read files or the web and change nothing */
export const READ_ONLY_TOOLS: ReadonlySet<string> = new Set(['read', 'glob', 'grep', 'websearch']);

/** .what = allows every call: the default, permissive for development (seed 000 usecase.9) */
export const allowAll: BhrainPermissionGuard = {
  name: 'allowAll',
  check: () => ({ decision: 'allow' }),
};

/** .what = allows only read, glob, grep and websearch; everything else is denied */
export const readOnly: BhrainPermissionGuard = {
  name: 'readOnly',
  check: ({ call }) =>
    READ_ONLY_TOOLS.has(call.name)
      ? { decision: 'allow' }
      : {
          decision: 'deny',
          reason: `${call.name} is not allowed: this session is read-only (only ${[...READ_ONLY_TOOLS].join(', ')} may run)`,
        },
};

/** .what = allows reads, asks before write, edit, bash and any other tool that may change something */
export const promptForWrites: BhrainPermissionGuard = {
  name: 'promptForWrites',
  check: ({ call }) =>
    READ_ONLY_TOOLS.has(call.name)
      ? { decision: 'allow' }
      : { decision: 'prompt', reason: `${call.name} may change files or run commands` },
};
