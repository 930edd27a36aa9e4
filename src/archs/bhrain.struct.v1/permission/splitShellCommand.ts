/** shells whose `-c` argument is itself a command line */
const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'yash', 'posh']);
/** shell options that take the next word as their value (`bash -o errexit -c …`) */
const SHELL_VALUE_OPTIONS = new Set(['-o', '+o', '-O', '+O', '--rcfile', '--init-file']);
/** programs whose `-c` / `--command` value is a command line run by a shell */
const DASH_C_RUNNERS = new Set(['su', 'runuser', 'script', 'flock']);

/**
 * wrappers that run the rest of their words as a command: the options that take a value, and how many positional
 * words come before the command (`timeout 5 rm …`, `flock FILE rm …`, `chroot DIR rm …`)
 */
const WRAPPERS: Record<string, { takesValue?: readonly string[]; positional?: number }> = {
  env: { takesValue: ['-u', '--unset', '-C', '--chdir'] },
  command: {},
  exec: { takesValue: ['-a'] },
  builtin: {},
  nohup: {},
  setsid: {},
  time: { takesValue: ['-f', '--format', '-o', '--output'] },
  nice: { takesValue: ['-n', '--adjustment'] },
  ionice: { takesValue: ['-c', '--class', '-n', '--classdata', '-p', '--pid', '-P', '--pgid', '-u', '--uid'] },
  chrt: { positional: 1 },
  taskset: { positional: 1 },
  timeout: { takesValue: ['-s', '--signal', '-k', '--kill-after'], positional: 1 },
  stdbuf: { takesValue: ['-i', '--input', '-o', '--output', '-e', '--error'] },
  sudo: { takesValue: ['-u', '--user', '-g', '--group', '-C', '--close-from', '-D', '--chdir', '-h', '--host', '-p', '--prompt', '-r', '--role', '-t', '--type', '-U', '--other-user', '-T', '--command-timeout', '-R', '--chroot'] },
  doas: { takesValue: ['-u', '-C'] },
  xargs: { takesValue: ['-a', '--arg-file', '-d', '--delimiter', '-E', '-I', '-L', '--max-lines', '-n', '--max-args', '-P', '--max-procs', '-s', '--max-chars', '--process-slot-var'] },
  parallel: { takesValue: ['-j', '--jobs', '-S', '--sshlogin', '-N', '-n', '--max-args', '--delay', '--timeout'] },
  watch: { takesValue: ['-n', '--interval'] },
  flock: { takesValue: ['-w', '--timeout', '-E', '--conflict-exit-code'], positional: 1 },
  chroot: { takesValue: ['--userspec', '--groups'], positional: 1 },
  strace: { takesValue: ['-e', '-o', '-p', '-s', '-u', '-E', '-P', '-a', '-b', '-I', '-X'] },
  ltrace: { takesValue: ['-e', '-o', '-p', '-s', '-u', '-n', '-a'] },
  unbuffer: {},
  busybox: {},
  fakeroot: {},
  proxychains: {},
  proxychains4: {},
  torsocks: {},
  firejail: {},
  catchsegv: {},
  coproc: {},
};
/** reserved words that may open a simple command (`if rm x; then rm y; fi`), or close a compound one */
const RESERVED = new Set(['if', 'then', 'elif', 'else', 'fi', 'do', 'done', 'while', 'until', '!', 'esac', '}', '{', 'function']);
/** find's actions that run a command up to `;` or `+` */
const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);
/** a redirection word: an optional fd, then the operator, then maybe its target glued on */
const REDIRECTION = /^(?:[0-9]+|&)?(?:>>?|<<?<?|<>|>&|<&|>\|)/;
/** a redirection operator alone: its target is the next word */
const REDIRECTION_ONLY = /^(?:[0-9]+|&)?(?:>>?|<<?<?-?|<>|>&|<&|>\|)$/;

/** .what = reads a $( … ) or ( … ) body starting after its opening paren, honouring nesting and quotes */
const readParenBody = (text: string, start: number): { body: string; end: number } => readBalanced(text, start, '(', ')');

/** .what = reads a body up to its matching closer, honouring nesting and quotes */
const readBalanced = (text: string, start: number, open: string, close: string): { body: string; end: number } => {
  let depth = 1;
  let quote: string | null = null;
  for (let index = start; index < text.length; index++) {
    const char = text[index];
    if (quote) {
      if (char === '\\' && quote === '"') index++;
      else if (char === quote) quote = null;
    } else if (char === '\\') index++;
    else if (char === "'" || char === '"') quote = char;
    else if (char === open) depth++;
    else if (char === close && --depth === 0) return { body: text.slice(start, index), end: index };
  }
  return { body: text.slice(start), end: text.length };
};

/** .what = the commands run by $( … ) and backticks inside a text that is otherwise a word (a ${…} expansion) */
const substitutionsIn = (text: string): string[] => {
  const found: string[] = [];
  for (let index = 0; index < text.length; index++) {
    if (text[index] === '\\') index++;
    else if (text[index] === '$' && text[index + 1] === '(') {
      const { body, end } = readParenBody(text, index + 2);
      found.push(...splitShellCommand(body));
      index = end;
    } else if (text[index] === '`') {
      const close = text.indexOf('`', index + 1);
      found.push(...splitShellCommand(text.slice(index + 1, close < 0 ? text.length : close)));
      index = close < 0 ? text.length : close;
    }
  }
  return found;
};

const ANSI_C_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v' };

/** .what = the text of a $'…' word with its escapes decoded, and where it ends */
const readAnsiC = (text: string, start: number): { value: string; end: number } => {
  let value = '';
  let index = start;
  for (; index < text.length && text[index] !== "'"; index++) {
    if (text[index] !== '\\') {
      value += text[index];
      continue;
    }
    const rest = text.slice(index + 1);
    const escape = /^(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|[\s\S])/.exec(rest)?.[1] ?? '';
    index += escape.length;
    if (/^[xuU]/.test(escape)) value += String.fromCodePoint(parseInt(escape.slice(1), 16) % 0x110000);
    else if (/^[0-7]/.test(escape)) value += String.fromCharCode(parseInt(escape, 8) & 0xff);
    else if (escape[0] === 'c') value += String.fromCharCode(escape.charCodeAt(1) & 0x1f);
    else value += ANSI_C_ESCAPES[escape] ?? escape;
  }
  return { value, end: index };
};

/**
 * .what = the simple commands inside a shell command line, each as its words joined by one space
 * .why = a rule like `bash(npm test)` must see every command a line runs: after ; && || | &, inside $( ), backticks and
 *        <( ), inside `bash -c '…'`, `eval`, `xargs`, `find -exec`, behind env prefixes, redirections, reserved words
 *        and wrappers (`sudo`, `timeout 5`, `nice -n 5`), whatever the quoting ($'\x72m', "r"m, \rm, line continuations)
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
  // whether the character after index ends a reserved word such as `{` (a blank, a separator, or the end)
  const standsAlone = (index: number) => index + 1 >= line.length || /[\s;&|]/.test(line[index + 1]);
  for (let index = 0; index < line.length; index++) {
    const char = line[index];
    if (char === "'") {
      const close = line.indexOf("'", index + 1);
      word = (word ?? '') + line.slice(index + 1, close < 0 ? line.length : close);
      index = close < 0 ? line.length : close;
    } else if (char === '$' && line[index + 1] === "'") {
      // ANSI-C quoting: $'\x72m' is rm
      const { value, end } = readAnsiC(line, index + 2);
      word = (word ?? '') + value;
      index = end;
    } else if (char === '"' || (char === '$' && line[index + 1] === '"')) {
      if (char === '$') index++;
      let text = '';
      for (index++; index < line.length && line[index] !== '"'; index++) {
        if (line[index] === '\\' && line[index + 1] === '\n') index++;
        else if (line[index] === '\\' && index + 1 < line.length) text += line[++index];
        else if (line[index] === '$' && line[index + 1] === '(') {
          const { body, end } = readParenBody(line, index + 2);
          commands.push(...splitShellCommand(body));
          text += `$(${body})`;
          index = end;
        } else if (line[index] === '$' && line[index + 1] === '{') {
          const { body, end } = readBalanced(line, index + 2, '{', '}');
          commands.push(...substitutionsIn(body));
          text += `\${${body}}`;
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
      // a backslash-newline is a line continuation: it joins, it adds nothing
      if (line[index + 1] !== '\n') word = (word ?? '') + (line[index + 1] ?? '');
      index++;
    } else if (char === '$' && line[index + 1] === '(') {
      const { body, end } = readParenBody(line, index + 2);
      commands.push(...splitShellCommand(body));
      word = (word ?? '') + `$(${body})`;
      index = end;
    } else if (char === '$' && line[index + 1] === '{') {
      const { body, end } = readBalanced(line, index + 2, '{', '}');
      commands.push(...substitutionsIn(body));
      word = (word ?? '') + `\${${body}}`;
      index = end;
    } else if ((char === '<' || char === '>') && line[index + 1] === '(') {
      // process substitution runs its body as a command
      const { body, end } = readParenBody(line, index + 2);
      commands.push(...splitShellCommand(body));
      word = (word ?? '') + `${char}(${body})`;
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
    } else if (char === '&' && (line[index + 1] === '>' || /[<>]$/.test(word ?? ''))) {
      // `2>&1`, `&>file`: part of a redirection, not a separator
      word = (word ?? '') + char;
    } else if (';&|\n'.includes(char)) endCommand();
    else if ((char === '{' || char === '}') && (word === null || (char === '{' && /\(\)$/.test(word))) && standsAlone(index)) {
      // a group's braces (`{ rm x; }`, `f() { rm x; }`) start and end commands
      endCommand();
    } else if (/\s/.test(char)) endWord();
    else word = (word ?? '') + char;
  }
  endCommand();
  return commands;
};

/** .what = the basename of a program word: `/bin/rm` is rm */
const programName = (word: string): string => word.split('/').pop() || word;

/** .what = the words after a wrapper's own options and positional arguments: the command it runs */
const afterWrapper = (words: string[], spec: { takesValue?: readonly string[]; positional?: number }): string[] => {
  let positional = spec.positional ?? 0;
  let index = 1;
  while (index < words.length) {
    const current = words[index];
    if (current === '--') {
      index++;
      break;
    }
    if (current.startsWith('-') && current.length > 1) {
      index += spec.takesValue?.includes(current) ? 2 : 1;
      continue;
    }
    if (positional > 0) {
      positional--;
      index++;
      continue;
    }
    break;
  }
  while (positional-- > 0 && index < words.length) index++;
  return words.slice(index);
};

/** .what = the command line a shell runs from `-c`, or null when it reads a script or stdin instead */
const shellCommandString = (words: string[]): { dashC: boolean; command: string | undefined } => {
  let dashC = false;
  for (let index = 1; index < words.length; index++) {
    const current = words[index];
    if (current === '--') return { dashC, command: words[index + 1] };
    if (SHELL_VALUE_OPTIONS.has(current)) {
      index++;
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(current)) {
      if (current.startsWith('-') && current.includes('c')) dashC = true;
      continue;
    }
    if (current.startsWith('--')) continue;
    return { dashC, command: current };
  }
  return { dashC, command: undefined };
};

/** .what = the value of `-c CMD`, `--command CMD` or `--command=CMD`, for su, runuser, script and flock */
const dashCValue = (words: string[]): string | undefined => {
  for (let index = 1; index < words.length; index++) {
    if (words[index] === '-c' || words[index] === '--command') return words[index + 1];
    if (words[index].startsWith('--command=')) return words[index].slice('--command='.length);
  }
  return undefined;
};

/** .what = the commands find runs with -exec, -execdir, -ok and -okdir, each up to its `;` or `+` */
const findExecCommands = (words: string[]): string[] => {
  const found: string[] = [];
  for (let index = 1; index < words.length; index++) {
    if (!FIND_EXEC.has(words[index])) continue;
    const start = index + 1;
    let end = start;
    while (end < words.length && words[end] !== ';' && words[end] !== '+') end++;
    found.push(...normalizeCommand(words.slice(start, end)));
    index = end;
  }
  return found;
};

/**
 * .what = one simple command's words without what only sets it up (env prefixes, leading redirections, reserved
 *         words, case patterns, wrappers); `bash -c X`, `eval X`, `xargs X`, `find -exec X ;` unfold into X's commands
 */
const normalizeCommand = (input: string[]): string[] => {
  let words = input;
  for (;;) {
    const first = words[0];
    if (first === undefined) return [];
    const program = programName(first);
    if (/^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(first)) words = words.slice(1);
    else if (REDIRECTION.test(first)) words = words.slice(REDIRECTION_ONLY.test(first) ? 2 : 1);
    else if (RESERVED.has(first)) words = words.slice(1);
    else if (first === 'case') {
      const inAt = words.indexOf('in');
      words = inAt < 0 ? [] : words.slice(inAt + 1);
    } else if (/^[^$`(]*\)$/.test(first) || /^[^\s$`()]+\(\)$/.test(first)) {
      // a case pattern (`x)`) before its command, or a function name (`f()`) before its body
      words = words.slice(1);
    } else if (WRAPPERS[program]) {
      const rest = afterWrapper(words, WRAPPERS[program]);
      // env -S 'rm x' splits its string into a command
      const split = program === 'env' ? words.find((candidate, index) => index > 0 && (candidate === '-S' || candidate === '--split-string')) : undefined;
      const splitValue =
        program === 'env' ? (split ? words[words.indexOf(split) + 1] : words.find((candidate) => candidate.startsWith('--split-string='))?.slice(15)) : undefined;
      if (splitValue !== undefined) return [...splitShellCommand(splitValue), ...normalizeCommand(rest)];
      // a wrapper with no command (`env`, `exec >log`) is itself the command
      if (!rest.length) return [words.join(' ')];
      // xargs appends the input to its command (`xargs rm` runs `rm <input>`), so the command is matched with an argument
      words = program === 'xargs' || program === 'parallel' ? [...rest, '{}'] : rest;
    } else break;
  }
  const program = programName(words[0]);
  if (SHELLS.has(program)) {
    const { dashC, command } = shellCommandString(words);
    if (dashC) return command === undefined ? [] : splitShellCommand(command);
  }
  if (DASH_C_RUNNERS.has(program)) {
    const command = dashCValue(words);
    if (command !== undefined) return splitShellCommand(command);
  }
  if (program === 'eval') return splitShellCommand(words.slice(1).join(' '));
  if (program === 'find') return [words.join(' '), ...findExecCommands(words)];
  return [words.join(' ')];
};

/**
 * .what = why a command's effect cannot be known from its words, or null when it can: a shell that reads a script or
 *         stdin (`curl … | sh`), `source`, or a program name that is only known at run time (`$X`, `$(…)`)
 * .why = a deny rule cannot be checked against commands it cannot see, so such a line must not pass silently
 */
export const describeOpaqueCommand = (command: string): string | null => {
  const first = command.split(' ')[0] ?? '';
  const program = programName(first);
  if (/[$`]/.test(first)) return `its program name \`${first}\` is only known when it runs`;
  // globs and braces pick the program when the line runs: `/bin/r?`, `{rm,-rf,x}`; `[` and `[[` are the test command
  if (first !== '[' && first !== '[[' && /[*?[{]/.test(first)) return `its program name \`${first}\` is a pattern expanded when it runs`;
  if (SHELLS.has(program)) return `\`${program}\` runs commands from a script or stdin that the rules cannot see`;
  if (program === 'source' || program === '.') return `\`${program}\` runs commands from a file that the rules cannot see`;
  if (program === 'alias') return 'an alias can rename a denied command so that the rules cannot see it';
  return null;
};
