/** shells whose `-c` argument is itself a command line */
const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh']);
/** wrappers that run the rest of their words as a command */
const WRAPPERS = new Set(['env', 'command', 'exec', 'nohup', 'time', 'nice', 'builtin']);

/** .what = reads a $( … ) or ( … ) body starting after its opening paren, honouring nesting and quotes */
const readParenBody = (text: string, start: number): { body: string; end: number } => {
  let depth = 1;
  let quote: string | null = null;
  for (let index = start; index < text.length; index++) {
    const char = text[index];
    if (quote) {
      if (char === '\\' && quote === '"') index++;
      else if (char === quote) quote = null;
    } else if (char === '\\') index++;
    else if (char === "'" || char === '"') quote = char;
    else if (char === '(') depth++;
    else if (char === ')' && --depth === 0) return { body: text.slice(start, index), end: index };
  }
  return { body: text.slice(start), end: text.length };
};

/**
 * .what = the simple commands inside a shell command line, each as its words joined by one space
 * .why = a rule like `bash(npm test)` must see every command a line runs: after ; && || | &, inside $( ) and backticks,
 *        inside `bash -c '…'` and `eval`, behind env prefixes and wrappers, whatever the quoting
 */
export const splitShellCommand = (line: string): string[] => {
  const commands: string[] = [];
  let words: string[] = [];
  let word: string | null = null;
  const endWord = () => {
    if (word !== null) words.push(word);
    word = null;
  };
  const endCommand = () => {
    endWord();
    commands.push(...normalizeCommand(words));
    words = [];
  };
  for (let index = 0; index < line.length; index++) {
    const char = line[index];
    if (char === "'") {
      const close = line.indexOf("'", index + 1);
      word = (word ?? '') + line.slice(index + 1, close < 0 ? line.length : close);
      index = close < 0 ? line.length : close;
    } else if (char === '"') {
      let text = '';
      for (index++; index < line.length && line[index] !== '"'; index++) {
        if (line[index] === '\\' && index + 1 < line.length) text += line[++index];
        else if (line[index] === '$' && line[index + 1] === '(') {
          const { body, end } = readParenBody(line, index + 2);
          commands.push(...splitShellCommand(body));
          text += `$(${body})`;
          index = end;
        } else if (line[index] === '`') {
          const close = line.indexOf('`', index + 1);
          const body = line.slice(index + 1, close < 0 ? line.length : close);
          commands.push(...splitShellCommand(body));
          text += `\`${body}\``;
          index = close < 0 ? line.length : close;
        } else text += line[index];
      }
      word = (word ?? '') + text;
    } else if (char === '\\') {
      word = (word ?? '') + (line[index + 1] ?? '');
      index++;
    } else if (char === '$' && line[index + 1] === '(') {
      const { body, end } = readParenBody(line, index + 2);
      commands.push(...splitShellCommand(body));
      word = (word ?? '') + `$(${body})`;
      index = end;
    } else if (char === '`') {
      const close = line.indexOf('`', index + 1);
      const body = line.slice(index + 1, close < 0 ? line.length : close);
      commands.push(...splitShellCommand(body));
      word = (word ?? '') + `\`${body}\``;
      index = close < 0 ? line.length : close;
    } else if (char === '(' && word === null) {
      const { body, end } = readParenBody(line, index + 1);
      commands.push(...splitShellCommand(body));
      index = end;
    } else if (';&|\n'.includes(char)) endCommand();
    else if (char === '{' || char === '}') endWord();
    else if (/\s/.test(char)) endWord();
    else word = (word ?? '') + char;
  }
  endCommand();
  return commands;
};

/** .what = one simple command's words without env prefixes and wrappers; `bash -c X` and `eval X` unfold into X's commands */
const normalizeCommand = (input: string[]): string[] => {
  let words = input;
  for (;;) {
    const first = words[0];
    if (first === undefined) return [];
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(first)) words = words.slice(1);
    else if (WRAPPERS.has(first)) words = words.slice(1).filter((candidate, index) => index > 0 || !candidate.startsWith('-'));
    else break;
  }
  const program = words[0].split('/').pop() ?? words[0];
  const dashC = words.indexOf('-c');
  if (SHELLS.has(program) && dashC > 0 && words[dashC + 1] !== undefined) return splitShellCommand(words[dashC + 1]);
  if (program === 'eval') return splitShellCommand(words.slice(1).join(' '));
  return [words.join(' ')];
};
