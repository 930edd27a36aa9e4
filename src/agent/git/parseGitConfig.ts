/** .what = one entry of a git config file: `section[.subsection].name` as git spells it, and its value ('' for a bare key) */
export interface GitConfigEntry {
  key: string;
  value: string;
}

/** git's own isspace: space, tab, line feed, carriage return (not \v nor \f) */
const isSpace = (char: string): boolean => char === ' ' || char === '\t' || char === '\n' || char === '\r';
const isAlpha = (char: string): boolean => /^[A-Za-z]$/.test(char);
/** the characters of a section's or a key's name */
const isKeyChar = (char: string): boolean => /^[A-Za-z0-9-]$/.test(char);

/**
 * .what = a reader of config text one character at a time, as git's get_next_char: CRLF is one line feed, and past the
 *         end every read is a line feed with `eof` set
 */
const genCharReader = (text: string) => {
  // a UTF-8 byte order mark at the very start is skipped, as git skips it
  let at = text.startsWith('\uFEFF') ? 1 : 0;
  const reader = {
    eof: false,
    /** the last character read: a line feed when a line has just ended */
    last: '',
    next: (): string => {
      if (at >= text.length) {
        reader.eof = true;
        return (reader.last = '\n');
      }
      let char = text[at++];
      if (char === '\r' && text[at] === '\n') {
        at++;
        char = '\n';
      }
      return (reader.last = char);
    },
  };
  return reader;
};
type CharReader = ReturnType<typeof genCharReader>;

/** .what = a `[section "subsection"]` header's quoted part, after the space that ended the section's name (get_extended_base_var) */
const readQuotedSubsection = (reader: CharReader, section: string, first: string): string | null => {
  let char = first;
  do {
    if (char === '\n') return null;
    char = reader.next();
  } while (isSpace(char));
  if (char !== '"') return null;
  let name = `${section}.`;
  for (;;) {
    char = reader.next();
    if (char === '\n') return null;
    if (char === '"') break;
    // any character escapes as itself
    if (char === '\\') {
      char = reader.next();
      if (char === '\n') return null;
    }
    name += char;
  }
  // the closing bracket right after the quote, with no space between
  return reader.next() === ']' ? name : null;
};

/** .what = a header after its `[`: the section (lowercased, the old `[section.subsection]` form whole), then a quoted subsection kept as written (get_base_var) */
const readHeader = (reader: CharReader): string | null => {
  let name = '';
  for (;;) {
    const char = reader.next();
    if (reader.eof) return null;
    if (char === ']') return name;
    if (isSpace(char)) return readQuotedSubsection(reader, name, char);
    if (!isKeyChar(char) && char !== '.') return null;
    name += char.toLowerCase();
  }
};

/** .what = a value after its `=`, to the end of its line: quotes, escapes, comments, continuations and spaces as git reads them (parse_value) */
const readValue = (reader: CharReader): string | null => {
  let quoted = false;
  let comment = false;
  let spaces = 0;
  let value = '';
  for (;;) {
    let char = reader.next();
    if (char === '\n') return quoted ? null : value;
    if (comment) continue;
    // a run of spaces outside quotes counts once its value has begun, and is kept only when more follows
    if (isSpace(char) && !quoted) {
      if (value.length) spaces++;
      continue;
    }
    if (!quoted && (char === ';' || char === '#')) {
      comment = true;
      continue;
    }
    value += ' '.repeat(spaces);
    spaces = 0;
    if (char === '\\') {
      char = reader.next();
      if (char === '\n') continue;
      const escaped = ({ t: '\t', b: '\b', n: '\n', '\\': '\\', '"': '"' } as Record<string, string>)[char];
      if (escaped === undefined) return null;
      value += escaped;
    } else if (char === '"') quoted = !quoted;
    else value += char;
  }
};

/** .what = a key's name after its first letter, then its value: '' when it stands alone, null when the line is not one (get_value) */
const readEntry = (reader: CharReader, key: string): GitConfigEntry | null => {
  let name = key;
  let char: string;
  for (;;) {
    char = reader.next();
    if (reader.eof || !isKeyChar(char)) break;
    name += char.toLowerCase();
  }
  while (char === ' ' || char === '\t') char = reader.next();
  if (char === '\n') return { key: name, value: '' };
  if (char !== '=') return null;
  const value = readValue(reader);
  return value === null ? null : { key: name, value };
};

/**
 * .what = what a git config file says, entry by entry, read as git reads it (a port of git's config.c parser): keys
 *         `section.subsection.name`, with the section and the name lowercased (and the subsection of the old
 *         `[section.subsection]` form), a quoted subsection as written
 * .why = the one reader of git's config in bhrain: credentials are found in it, and every key that names a command is
 *        disarmed from it (genGitConfigOverrides), so it must see each key git sees. Where git stops at an error (and
 *        then refuses to run at all), this goes on from the next line: more entries only redact and disarm more
 * .note = git's own `git config --list` is the test of it, over generated files (parseGitConfig.test.ts)
 */
export const parseGitConfig = (text: string): GitConfigEntry[] => {
  const entries: GitConfigEntry[] = [];
  const reader = genCharReader(text);
  let stem = '';
  let comment = false;
  for (;;) {
    const char = reader.next();
    if (char === '\n') {
      if (reader.eof) return entries;
      comment = false;
      continue;
    }
    if (comment || isSpace(char)) continue;
    if (char === '#' || char === ';') {
      comment = true;
      continue;
    }
    let failed = false;
    if (char === '[') {
      const header = readHeader(reader);
      if (header) stem = `${header}.`;
      else failed = true;
    } else if (isAlpha(char)) {
      const entry = readEntry(reader, stem + char.toLowerCase());
      if (entry) entries.push(entry);
      else failed = true;
    } else failed = true;
    // git stops here; the rest of the line is skipped (unless the failure ended it), and reading goes on
    if (failed) comment = reader.last !== '\n';
  }
};
