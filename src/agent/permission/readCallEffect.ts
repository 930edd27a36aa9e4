import type { BhrainTool, BhrainToolEffect, BhrainToolPath } from '../tool/defineTool.js';
import { genBashToolBox } from '../toolboxes/bash/genBashToolBox.js';
import { genFilesToolBox } from '../toolboxes/files/genFilesToolBox.js';
import { genWebsearchToolBox } from '../toolboxes/websearch/genWebsearchToolBox.js';
import type { BhrainPermissionCheck } from './BhrainPermissionGuard.js';

/** .what = bhrain's built-in tools by name, made on the first check that needs them */
let builtins: ReadonlyMap<string, BhrainTool> | null = null;
const builtinTools = (): ReadonlyMap<string, BhrainTool> =>
  (builtins ??= new Map(
    [...genFilesToolBox().tools, ...genBashToolBox().tools, ...genWebsearchToolBox().tools].map((tool) => [tool.name, tool]),
  ));

/**
 * .what = the paths an input that does not fit its tool's schema names, as far as they can be read: those that are strings
 * .why = a guard asked about such a call on its own (the session never asks: it answers the input first) still judges
 *        the path the call names, as before effects, rather than judging it as a call that touches nothing
 */
const pathsOfUnchecked = (tool: BhrainTool, input: Record<string, unknown> | undefined, context: { cwd: string }): BhrainToolPath[] => {
  try {
    return tool.paths(input ?? {}, context).filter((each) => typeof each?.path === 'string');
  } catch {
    return [];
  }
};

/**
 * .what = a checked call's effect and paths: as the session told them, or, for a check of the plain guard shape (docs/design/loop.md#permission) ({ call }
 *         only), as bhrain's built-in tool of that name declares them; any other tool is effect-unknown, with no paths
 * .why = a guard judges what a call does; a caller that predates effects (a test, a guard that wraps another) still gets
 *        the built-in tools judged as before, and never an unknown tool judged as harmless
 */
export const readCallEffect = async (
  input: BhrainPermissionCheck,
  context: { cwd: string },
): Promise<{ effect: BhrainToolEffect | null; paths: readonly BhrainToolPath[] }> => {
  if (input.effect !== undefined) return { effect: input.effect, paths: input.paths ?? [] };
  const tool = builtinTools().get(input.call.name);
  if (!tool) return { effect: null, paths: input.paths ?? [] };
  if (input.paths) return { effect: tool.effect, paths: input.paths };
  const checked = await tool.check(input.call.input ?? {});
  return {
    effect: tool.effect,
    paths: checked.ok ? tool.paths(checked.value, context) : pathsOfUnchecked(tool, input.call.input, context),
  };
};

/**
 * .what = the names of bhrain's built-in tools with a given effect: with 'read', the tools readOnly and promptForWrites
 *         let run without asking (read, glob, grep, websearch)
 * .why = read from the tools' own declarations, so a settings check that compares a rules file with a builtin guard
 *        agrees with what the guard does
 */
export const namesOfBuiltinTools = (effect: BhrainToolEffect): string[] =>
  [...builtinTools().values()].filter((tool) => tool.effect === effect).map((tool) => tool.name);
