// what makeTool loads on the first check of a deferred input (deferInput): zod's safeParse alone, imported statically
// here so that the bundle's lazy chunk holds only it and what it needs, not all of zod's core
export { safeParse } from 'zod/v4/core';
