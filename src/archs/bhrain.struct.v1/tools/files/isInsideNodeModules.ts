import { sep } from 'node:path';

/**
 * .what = whether an absolute path lies in (or is) a node_modules directory
 * .why = a search rooted inside node_modules was asked for explicitly, so node_modules must not be skipped there
 */
export const isInsideNodeModules = (absolutePath: string): boolean => absolutePath.split(sep).includes('node_modules');
