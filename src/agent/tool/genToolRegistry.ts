import type { BrainToolDefinition } from '../../core/contract/BrainMessage.js';
import { BadRequestError } from '../../core/contract/errors.js';
import type { BhrainToolBox } from './BhrainToolBox.js';

/**
 * .what = the toolboxes a session offers, merged, with tool names unique across them
 * .why = toolboxes compose and change at runtime; the loop reads the current set every iteration
 */
export interface BhrainToolRegistry {
  add: (box: BhrainToolBox) => void;
  remove: (boxName: string) => void;
  boxes: () => readonly BhrainToolBox[];
  definitions: () => BrainToolDefinition[];
  find: (toolName: string) => BhrainToolBox | null;
}

/** .what = a registry over the given boxes; a tool name offered twice fails here, at configuration time */
export const genToolRegistry = (initial: readonly BhrainToolBox[]): BhrainToolRegistry => {
  const boxes: BhrainToolBox[] = [];
  const owner = new Map<string, BhrainToolBox>();
  const add = (box: BhrainToolBox) => {
    if (boxes.some((existing) => existing.name === box.name))
      throw new BadRequestError(`a toolbox named '${box.name}' is already configured: toolbox names must be unique`);
    const seen = new Set<string>();
    for (const definition of box.definitions) {
      const clash = owner.get(definition.name) ?? (seen.has(definition.name) ? box : null);
      if (clash)
        throw new BadRequestError(
          `conflicting tool name '${definition.name}': offered by toolbox '${clash.name}' and by toolbox '${box.name}'. Rename one tool or drop one toolbox`,
        );
      seen.add(definition.name);
    }
    boxes.push(box);
    for (const definition of box.definitions) owner.set(definition.name, box);
  };
  for (const box of initial) add(box);
  return {
    add,
    remove: (boxName) => {
      const index = boxes.findIndex((box) => box.name === boxName);
      if (index < 0)
        throw new BadRequestError(
          `no toolbox named '${boxName}' to remove: configured toolboxes are ${boxes.map((box) => box.name).join(', ') || '(none)'}`,
        );
      for (const definition of boxes[index].definitions) owner.delete(definition.name);
      boxes.splice(index, 1);
    },
    boxes: () => boxes,
    definitions: () => boxes.flatMap((box) => box.definitions),
    find: (toolName) => owner.get(toolName) ?? null,
  };
};
