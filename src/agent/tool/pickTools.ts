import type { BhrainToolBox } from './BhrainToolBox.js';
import type { BhrainTool, BhrainToolEffect } from './defineTool.js';
import { toolBoxOf, toolOfBox } from './executeTool.js';

/**
 * .what = a toolbox restricted to the tools a test keeps: only those are offered, and only those run
 * .why = read-only sessions and subagents offer the model the tools whose effect is read, without the others even being
 *        visible; a plain box's tools are effect-unknown, so a test on the effect keeps none of them
 */
export const pickTools = (box: BhrainToolBox, keep: (tool: BhrainTool) => boolean): BhrainToolBox =>
  toolBoxOf({ name: box.name, tools: box.definitions.map((definition) => toolOfBox(box, definition.name)).filter(keep) });

/** .what = whether a tool's effect is one of these: `pickTools(box, withEffect('read'))` */
export const withEffect =
  (...effects: BhrainToolEffect[]) =>
  (tool: BhrainTool): boolean =>
    tool.effect !== null && effects.includes(tool.effect);
