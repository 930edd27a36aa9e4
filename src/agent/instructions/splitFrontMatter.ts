/**
 * .what = a Markdown file's text split into its YAML front matter (between a first line `---` and the next line `---`)
 *         and its body; null with why, when it has none
 * .why = Agent Skills (SKILL.md) and agent files (.bhrain/agents/*.md) are front matter plus instructions; the skill tool
 *        needs the body only, without loading a YAML parser
 */
export const splitFrontMatter = (text: string): { frontMatter: string; body: string } | { problem: string } => {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trimEnd() !== '---')
    return { problem: 'has no front matter: its first line must be ---, then the YAML fields (name:, description:), then a line ---' };
  const end = lines.findIndex((line, index) => index > 0 && /^(---|\.\.\.)\s*$/.test(line));
  if (end < 0) return { problem: 'has no end to its front matter: the YAML fields must be followed by a line ---' };
  return {
    frontMatter: lines.slice(1, end).join('\n'),
    body: lines
      .slice(end + 1)
      .join('\n')
      .trim(),
  };
};
