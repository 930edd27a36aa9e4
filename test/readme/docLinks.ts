// the readme and the docs/ pages link to each other; these read the links and headings of a markdown page
// the way GitHub renders it, so a test can prove that every relative link and #anchor resolves
import { dirname, join, normalize } from 'node:path/posix';

/** .what = a markdown page's lines, each with whether it lies inside a fenced code block (```, ~~~) */
const linesOutsideFences = (markdown: string): { text: string; number: number }[] => {
  const lines: { text: string; number: number }[] = [];
  let fence: string | null = null;
  markdown.split('\n').forEach((text, index) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(text)?.[1];
    if (fence === null && marker) fence = marker;
    else if (fence !== null && marker && marker[0] === fence[0] && marker.length >= fence.length && !text.trim().slice(marker.length))
      fence = null;
    else if (fence === null) lines.push({ text, number: index + 1 });
  });
  return lines;
};

/** .what = a line with its inline code spans (`x`, ``x``) blanked, so a link written as code is not read as a link */
const withoutCodeSpans = (line: string): string => line.replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, (span) => ' '.repeat(span.length));

/**
 * .what = the anchor GitHub gives a heading's text: lowercase, punctuation removed except `-` and `_`, each space a `-`
 * .why = a link's #anchor must name it exactly; this is github-slugger's rule, which github.com uses
 */
export const slugOfHeading = (heading: string): string =>
  heading
    .replace(/(`+)([\s\S]*?)\1/g, '$2') // inline code renders as its text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link renders as its text
    .replace(/<[^>]+>/g, '') // html tags render as nothing
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');

/** .what = every anchor a page's headings make, a repeated one suffixed -1, -2, … as GitHub does */
export const anchorsOf = (markdown: string): Set<string> => {
  const occurrences = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text } of linesOutsideFences(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const base = slugOfHeading(heading);
    let anchor = base;
    while (occurrences.has(anchor)) {
      occurrences.set(base, occurrences.get(base)! + 1);
      anchor = `${base}-${occurrences.get(base)}`;
    }
    occurrences.set(anchor, 0);
    anchors.add(anchor);
  }
  return anchors;
};

/** .what = every link target of a page, outside code: inline links and images `[text](target)` and definitions `[id]: target` */
export const linksOf = (markdown: string): { target: string; line: number }[] =>
  linesOutsideFences(markdown).flatMap(({ text, number }) => {
    const line = withoutCodeSpans(text);
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/.exec(line);
    const inline = [...line.matchAll(/!?\[(?:[^\][]|\[[^\]]*\])*\]\(\s*<?([^\s)>]+)>?(?:\s+["'(][^)]*)?\)/g)].map((match) => match[1]);
    return [...(definition ? [definition[1]] : []), ...inline].map((target) => ({ target, line: number }));
  });

/** .what = a link that leads nowhere: the page and line it is on, its target, and why */
export interface BrokenLink {
  page: string;
  line: number;
  target: string;
  problem: string;
}

/**
 * .what = the relative links and #anchors of the given pages that do not resolve: a file that does not exist, or an
 *         anchor that no heading of its page makes. Absolute URLs (http:, https:, mailto:) are not followed
 * .why = the readme is a front page that links into docs/, and the pages link to each other's sections
 * .note = pages are keyed by their path from the repository root (`readme.md`, `docs/settings.md`); `read` gives the
 *         text of a path that is not among them (null when nothing is there), and `exists` whether a path exists
 */
export const findBrokenLinks = (
  pages: Record<string, string>,
  context: { read: (path: string) => string | null; exists: (path: string) => boolean },
): BrokenLink[] =>
  Object.entries(pages).flatMap(([page, markdown]) =>
    linksOf(markdown).flatMap(({ target, line }): BrokenLink[] => {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return [];
      const hashAt = target.indexOf('#');
      const pathPart = decodeURIComponent(hashAt < 0 ? target : target.slice(0, hashAt));
      const anchor = hashAt < 0 ? null : decodeURIComponent(target.slice(hashAt + 1));
      const path = pathPart ? normalize(join(dirname(page), pathPart)).replace(/\/$/, '') : page;
      if (path.startsWith('..')) return [{ page, line, target, problem: 'it leads out of the repository' }];
      if (!(path in pages) && !context.exists(path)) return [{ page, line, target, problem: `${path} does not exist` }];
      if (anchor === null || !path.endsWith('.md')) return [];
      const text = pages[path] ?? context.read(path);
      if (text === null) return [{ page, line, target, problem: `${path} cannot be read` }];
      const anchors = anchorsOf(text);
      if (anchors.has(anchor)) return [];
      return [{ page, line, target, problem: `no heading of ${path} makes the anchor #${anchor}` }];
    }),
  );
