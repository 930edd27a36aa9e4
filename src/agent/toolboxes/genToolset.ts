import type { BashSandbox } from '../../sandbox/BashSandbox.js';
import type { ReadDenial } from '../../sandbox/resolveHiddenPaths.js';
import type { BhrainPermissionGuard } from '../permission/BhrainPermissionGuard.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { pickTools, withEffect } from '../tool/pickTools.js';
import { genBashToolBox } from './bash/genBashToolBox.js';
import { genFilesToolBox } from './files/genFilesToolBox.js';
import { genWebsearchToolBox } from './websearch/genWebsearchToolBox.js';

/** .what = what a toolset may do: 'all' its tools, or only those whose effect is read ('read-only') */
export type BhrainToolsetAccess = 'all' | 'read-only';

/**
 * .what = what the default toolboxes hide beyond the defaults, and hand back: the sandbox's denyRead, and its allowRead
 *         with the paths the permission guard's rules hand back (`read(~/.npmrc)`)
 * .why = the files toolbox and the bash sandbox hide the same paths, and a rule the user wrote opens a path in both
 */
export const readDenialOf = (input: { sandbox?: BashSandbox; permissionGuard?: Pick<BhrainPermissionGuard, 'allowRead'> }): ReadDenial => ({
  denyRead: input.sandbox?.denyRead ?? [],
  allowRead: [...(input.sandbox?.allowRead ?? []), ...(input.permissionGuard?.allowRead ?? [])],
});

/**
 * .what = the one place a toolset is assembled: bhrain's own toolboxes (files, bash, websearch) or the boxes given,
 *         all their tools or only those that read
 * .why = a brain's defaults (configureBhrain), the repl's ask and act brains and a read-only subagent's tools are one
 *        idea: what a session may do decides what it is offered, so a tool that changes things is never even visible
 *        to a read-only one. A read-only toolset of the defaults builds no bash toolbox at all
 * .note = the sandbox (with its denyRead and allowRead) and the guard's allowRead reach only bhrain's own toolboxes:
 *         boxes given are taken as they are
 */
export const genToolset = (input: {
  access: BhrainToolsetAccess;
  /** the boxes to offer; absent = bhrain's own */
  boxes?: readonly BhrainToolBox[];
  sandbox?: BashSandbox;
  permissionGuard?: Pick<BhrainPermissionGuard, 'allowRead'>;
}): BhrainToolBox[] => {
  const denial = readDenialOf(input);
  const boxes =
    input.boxes ??
    (input.access === 'read-only'
      ? [genFilesToolBox(denial), genWebsearchToolBox()]
      : [genFilesToolBox(denial), genBashToolBox({ sandbox: { ...input.sandbox, ...denial } }), genWebsearchToolBox()]);
  if (input.access === 'all') return [...boxes];
  // the tools whose effect is read, from every box that has one: the files tools, websearch, an MCP server's read-only tools
  return boxes.map((box) => pickTools(box, withEffect('read'))).filter((box) => box.definitions.length > 0);
};
