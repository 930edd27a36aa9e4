import type { BhrainToolBox } from './BhrainToolBox.js';

/**
 * .what = a toolbox restricted to some of its tools: only those are offered, and only those run
 * .why = read-only sessions offer the model read, glob and grep without write or edit even being visible
 */
export const pickTools = (box: BhrainToolBox, names: readonly string[]): BhrainToolBox => {
  const definitions = box.definitions.filter((definition) => names.includes(definition.name));
  const offered = new Set(definitions.map((definition) => definition.name));
  return {
    name: box.name,
    definitions,
    execute: async (input, context) =>
      offered.has(input.call.name)
        ? box.execute(input, context)
        : { callId: input.call.id, success: false, output: `tool ${input.call.name} is not offered in this session` },
  };
};
