/** .what = whether path is root or lies beneath it (both absolute and normalized); a prefix test, no allocation */
export const isUnder = (root: string, path: string): boolean =>
  path === root || (path.startsWith(root) && (root.endsWith('/') || path.charCodeAt(root.length) === 47));
