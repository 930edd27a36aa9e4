import { isAbsolute } from 'node:path';

import type { Node, Tree } from 'web-tree-sitter';

import { genShellParser } from './genShellParser.js';
import {
  BASH_LIKE_SHELLS,
  FIND_EXEC_ACTIONS,
  FIND_WRITE_ACTIONS,
  isDangerousVariable,
  isHarmlessDevice,
  isInertVariable,
  OPAQUE_PROGRAMS,
  RESERVED_WORDS,
  SHELL_WRAPPERS,
  type ShellWrapper,
} from './shellPrograms.js';

/** .what = one simple command a line would run, with its words as bash sees them (a word known only at run time as written) */
export interface ShellCommand {
  words: string[];
  /** `VAR=x` prefixes that may change what the program does, as written; an allow rule must match them too */
  env: string[];
  /** it only runs the next command found (time, nice, `bash -c '…'`): an allow-list judges what it runs instead */
  transparent: boolean;
}

/** .what = a file the line writes (a redirect, tee, find -fprint): its path as written, or null with why it is not known */
export type ShellWrite = { path: string; shown: string } | { path: null; shown: string; why: string };

/**
 * .what = what a bash line would do, read from a real parse: every simple command it runs, every file it writes by
 *         redirect or tee, and every construct that is not understood (each with why)
 * .why = rules judge this, not the text: a command hidden in a comment-looking quote, a here-doc or `case` is still seen
 */
export interface ShellAnalysis {
  commands: ShellCommand[];
  writes: ShellWrite[];
  unreadable: string[];
}

/** `bash -c` strings nested deeper than this are not followed */
const MAX_NESTED_STRINGS = 8;
/** syntax nested deeper than this is not walked (a hostile line could otherwise exhaust the stack) */
const MAX_TREE_DEPTH = 400;
/** tokens whose text may hold a line break: quoted text and here-doc bodies */
const TEXT_TOKENS = new Set(['string_content', 'raw_string', 'ansi_c_string', 'heredoc_body', 'heredoc_content', 'comment']);
/** arithmetic comparisons of `[[ ]]`: bash evaluates their operands as arithmetic */
const ARITHMETIC_TESTS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);

/** a word as bash would see it: its value when it is literal, null when only known at run time, and whether it globs */
interface Word {
  value: string | null;
  text: string;
  pattern: boolean;
}

interface Scan {
  parse: (line: string) => Tree;
  found: ShellAnalysis;
  /** arithmetic texts bash evaluates; checked at the end, once every tainted name is known */
  arithmetic: string[];
  /** names the line sets to something other than a number: their value, read as arithmetic, could run code */
  tainted: Set<string>;
  changesDirectory: boolean;
}

const shorten = (text: string): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 60 ? `${flat.slice(0, 57)}…` : flat;
};

const unreadable = (scan: Scan, why: string) => {
  if (!scan.found.unreadable.includes(why)) scan.found.unreadable.push(why);
};

const ANSI_C_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v' };

/** .what = the text of a $'…' word with its escapes decoded */
const decodeAnsiC = (body: string): string =>
  body.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|[\s\S])/g, (_, escape: string) => {
    if (/^[xuU]/.test(escape)) return String.fromCodePoint(parseInt(escape.slice(1), 16) % 0x110000);
    if (/^[0-7]/.test(escape)) return String.fromCharCode(parseInt(escape, 8) & 0xff);
    if (escape[0] === 'c' && escape.length === 2) return String.fromCharCode(escape.charCodeAt(1) & 0x1f);
    return ANSI_C_ESCAPES[escape] ?? escape;
  });

/** .what = an unquoted word's value: backslashes removed, line continuations joined; whether it globs or brace-expands */
const resolveBareWord = (text: string): Word => {
  let value = '';
  let pattern = false;
  for (let index = 0; index < text.length; index++) {
    if (text[index] === '\\') {
      if (text[index + 1] !== '\n') value += text[index + 1] ?? '';
      index++;
      continue;
    }
    if ('*?['.includes(text[index])) pattern = true;
    value += text[index];
  }
  if (/\{[^}]*(,|\.\.)[^}]*\}/.test(text)) pattern = true;
  // `~` expands to a home directory bash picks at run time
  return { value: text.startsWith('~') ? null : value, text, pattern };
};

/** .what = a word node as bash would see it after quote removal, when nothing in it expands at run time */
const resolveWord = (node: Node): Word => {
  const text = node.text;
  const unknown: Word = { value: null, text, pattern: false };
  switch (node.type) {
    case 'word':
    case 'number':
      return node.namedChildCount ? unknown : resolveBareWord(text);
    case 'raw_string':
      return { value: text.slice(1, -1), text, pattern: false };
    case 'ansi_c_string':
      return { value: decodeAnsiC(text.slice(2, -1)), text, pattern: false };
    case 'string':
    case 'translated_string': {
      let value = '';
      for (const child of node.namedChildren) {
        if (child.type === 'string') value += resolveWord(child).value ?? '\0';
        else if (child.type === 'string_content')
          value += child.text.replace(/\\([$`"\\\n])/g, (_, escaped: string) => (escaped === '\n' ? '' : escaped));
        else return unknown;
      }
      return value.includes('\0') ? unknown : { value, text, pattern: false };
    }
    case 'concatenation':
    case 'command_name': {
      // an unnamed token inside a word (a stray backquote) is not text the analysis can read
      if (node.children.some((child) => !child.isNamed)) return unknown;
      const parts = node.namedChildren.map(resolveWord);
      if (parts.some((part) => part.value === null)) return { ...unknown, pattern: parts.some((part) => part.pattern) };
      return { value: parts.map((part) => part.value).join(''), text, pattern: parts.some((part) => part.pattern) };
    }
    default:
      return unknown;
  }
};

const literal = (value: string): Word => ({ value, text: value, pattern: false });
const programOf = (word: string): string => word.split('/').pop() || word;
const isInteger = (value: string | null): boolean => value !== null && /^[+-]?\d+$/.test(value.trim());

/** .what = records a name given to a builtin that takes variable names; one with a subscript, or unknown, is unreadable */
const judgeVariableName = (scan: Scan, program: string, word: Word, { assigns }: { assigns: boolean }) => {
  if (word.value === null)
    return unreadable(scan, `\`${program}\` is given a variable name only known when it runs (\`${shorten(word.text)}\`)`);
  const [name, ...rest] = word.value.split('=');
  const bare = name.replace(/\+$/, '');
  if (bare.includes('['))
    return unreadable(
      scan,
      `\`${program} ${shorten(word.text)}\` names an array element whose subscript bash evaluates, and a subscript can run commands`,
    );
  if (isDangerousVariable(bare)) return unreadable(scan, `assigning ${bare} makes bash run or find commands the rules cannot see`);
  if (assigns && (!rest.length || !isInteger(rest.join('=')))) scan.tainted.add(bare);
};

/** .what = the words after a wrapper's own options and positional arguments: the command it runs */
const afterWrapper = (words: Word[], spec: ShellWrapper): Word[] => {
  let positional = spec.positional ?? 0;
  let index = 1;
  while (index < words.length) {
    const current = words[index].value;
    if (current === '--') {
      index++;
      break;
    }
    if (current !== null && current.startsWith('-') && current.length > 1) {
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
  return words.slice(index);
};

/** .what = judges env's own options and assignments; returns the command it runs, or null when it splits a string */
const unwrapEnv = (scan: Scan, words: Word[], env: string[]): Word[] | null => {
  let index = 1;
  for (; index < words.length; index++) {
    const value = words[index].value;
    if (value === null) break;
    if (value === '--split-string' || value.startsWith('--split-string=') || (/^-[^-]/.test(value) && /^-[i0v]*S/.test(value))) {
      unreadable(scan, `\`env ${shorten(words[index].text)}\` splits a string into a command when it runs`);
      return null;
    }
    if (value === '-u' || value === '-C' || value === '--unset' || value === '--chdir') index++;
    else if (value === '--') continue;
    else if (value.startsWith('-')) continue;
    else if (/^[^=]+=/.test(value)) {
      const name = value.split('=')[0];
      if (isDangerousVariable(name)) unreadable(scan, `assigning ${name} makes bash run or find commands the rules cannot see`);
      else if (!isInertVariable(name)) env.push(words[index].text);
    } else break;
  }
  return words.slice(index);
};

/** .what = judges a command string that bash runs (`bash -c`, `eval`, `trap`, `flock -c`), parsing it when literal */
const judgeCommandString = (scan: Scan, owner: string, word: Word | undefined, depth: number, marker: string | null) => {
  if (!word) return unreadable(scan, `\`${owner}\` gets its command string only when it runs`);
  if (word.value === null || (marker !== null && word.value.includes(marker)))
    return unreadable(scan, `the command string of \`${owner}\` (\`${shorten(word.text)}\`) is only known when it runs`);
  if (depth >= MAX_NESTED_STRINGS) return unreadable(scan, `command strings nested more than ${MAX_NESTED_STRINGS} deep`);
  scanLine(scan, word.value, depth + 1);
};

/** .what = the options a bash-like shell is given, and the command string of `-c` (undefined when it reads a script or stdin) */
const shellDashC = (words: Word[]): { dashC: boolean; string: Word | undefined } => {
  let dashC = false;
  for (let index = 1; index < words.length; index++) {
    const current = words[index].value;
    if (current === '--') return { dashC, string: words[index + 1] };
    if (current !== null && ['-o', '+o', '-O', '+O', '--rcfile', '--init-file'].includes(current)) {
      index++;
      continue;
    }
    if (current !== null && /^[-+][A-Za-z]+$/.test(current)) {
      if (current.startsWith('-') && current.includes('c')) dashC = true;
      continue;
    }
    if (current !== null && current.startsWith('--')) continue;
    return { dashC, string: words[index] };
  }
  return { dashC, string: undefined };
};

/** .what = judges builtins that take variable names or arithmetic, or that run strings given as options */
const judgeBuiltinArguments = (scan: Scan, program: string, words: Word[]) => {
  const args = words.slice(1);
  const options = args.filter((word) => word.value?.startsWith('-'));
  const hasOption = (letter: string) => options.some((word) => /^-[A-Za-z]+$/.test(word.value!) && word.value!.includes(letter));
  switch (program) {
    case 'hash':
      if (hasOption('p')) unreadable(scan, '`hash -p` makes a name run another program');
      return;
    case 'compgen':
    case 'complete':
      if (options.some((word) => word.value!.startsWith('-C') || (/^-[A-Za-z]+$/.test(word.value!) && word.value!.includes('C'))))
        unreadable(scan, `\`${program} -C\` runs a command string`);
      return;
    case 'mapfile':
    case 'readarray':
      if (options.some((word) => /^-[A-Za-z]*C/.test(word.value!)))
        return unreadable(scan, `\`${program} -C\` runs a command string for each line`);
      return judgeOperandNames(scan, program, args, ['-d', '-n', '-O', '-s', '-u', '-c']);
    case 'read':
      return judgeOperandNames(scan, program, args, ['-d', '-i', '-n', '-N', '-p', '-t', '-u']);
    case 'getopts':
      if (args[1]) judgeVariableName(scan, program, args[1], { assigns: true });
      return;
    case 'wait':
      // `wait -p name` (also `-np name`, `-pname`) sets name to the pid of the job that ended: a subscript there runs
      for (const [index, word] of args.entries()) {
        // a word known only when it runs could be `-p`, making the next one a name: only a last one is a plain pid
        if (word.value === null && index < args.length - 1)
          return unreadable(
            scan,
            `\`wait ${shorten(word.text)} …\` is given a word only known when it runs, which could be -p and make the next word a variable name`,
          );
        const cluster = word.value === null ? null : /^-[fn]*p(.*)$/.exec(word.value);
        if (word.value === '--' || (word.value !== null && !word.value.startsWith('-'))) return;
        if (cluster)
          judgeVariableName(scan, program, cluster[1] ? { ...word, value: cluster[1] } : (args[index + 1] ?? literal('')), {
            assigns: true,
          });
      }
      return;
    case 'printf': {
      const at = args.findIndex((word) => word.value === '-v');
      if (at >= 0) judgeVariableName(scan, program, args[at + 1] ?? literal(''), { assigns: true });
      else if (args[0]?.value?.startsWith('-v'))
        judgeVariableName(scan, program, { ...args[0], value: args[0].value.slice(2) }, { assigns: true });
      return;
    }
    case 'let':
      for (const word of args) {
        if (word.value === null) unreadable(scan, `\`let ${shorten(word.text)}\` evaluates arithmetic only known when it runs`);
        else scan.arithmetic.push(word.value);
      }
      return;
    case 'test':
    case '[':
      for (const [index, word] of args.entries())
        if (word.value === '-v' || word.value === '-R')
          judgeVariableName(scan, program, args[index + 1] ?? literal(''), { assigns: false });
      return;
    case 'declare':
    case 'typeset':
    case 'local':
    case 'export':
    case 'readonly':
    case 'unset':
      return judgeDeclarationWords(scan, program, args);
  }
};

/** .what = judges the operands of read/mapfile: each a variable name, set from input (so tainted) */
const judgeOperandNames = (scan: Scan, program: string, args: Word[], takesValue: string[]) => {
  for (let index = 0; index < args.length; index++) {
    const value = args[index].value;
    if (value !== null && value.startsWith('-')) {
      if (value === '-a') judgeVariableName(scan, program, args[++index] ?? literal(''), { assigns: true });
      else if (takesValue.includes(value)) index++;
      continue;
    }
    judgeVariableName(scan, program, args[index], { assigns: true });
  }
};

/** .what = judges the words of declare/typeset/local/export/readonly/unset: flags, names and `name=value`s */
const judgeDeclarationWords = (scan: Scan, program: string, args: Word[]) => {
  for (const word of args) {
    if (word.value !== null && /^[-+][A-Za-z]+$/.test(word.value)) {
      // -i makes later assignments arithmetic, -n makes a name a reference that may carry a subscript
      if (['declare', 'typeset', 'local'].includes(program) && /[in]/.test(word.value))
        unreadable(scan, `\`${program} ${word.value}\` makes bash evaluate later values as arithmetic or references`);
      continue;
    }
    judgeVariableName(scan, program, word, { assigns: program !== 'unset' });
  }
};

/**
 * .what = judges one simple command: records it, then what it runs when it is a wrapper, a shell with `-c`, eval or find
 * .why = deny rules name programs, so `sudo rm`, `timeout 5 rm` and `bash -c 'rm'` must all reach the `rm`
 */
const judgeSimpleCommand = (scan: Scan, input: { words: Word[]; env: string[]; depth: number; marker: string | null }) => {
  let { words, env, marker } = input;
  for (;;) {
    const first = words[0];
    if (!first) return;
    if (first.value === null || first.pattern || (marker !== null && first.value.includes(marker)))
      return unreadable(scan, `the program name \`${shorten(first.text)}\` is only known when it runs`);
    const program = programOf(first.value);
    const push = (transparent: boolean) =>
      scan.found.commands.push({ words: words.map((word) => word.value ?? word.text), env, transparent });
    if (RESERVED_WORDS.has(first.value)) return unreadable(scan, `the reserved word \`${first.value}\` where a command should be`);
    if (['cd', 'pushd', 'popd'].includes(program)) scan.changesDirectory = true;
    if (OPAQUE_PROGRAMS[program]) {
      push(false);
      return unreadable(scan, OPAQUE_PROGRAMS[program]);
    }
    judgeBuiltinArguments(scan, program, words);
    if (BASH_LIKE_SHELLS.has(program)) {
      const { dashC, string } = shellDashC(words);
      push(dashC);
      if (!dashC) return unreadable(scan, `\`${program}\` runs commands from a script or stdin that the rules cannot see`);
      return judgeCommandString(scan, `${program} -c`, string, input.depth, marker);
    }
    if (program === 'eval') {
      push(true);
      const args = words.slice(1);
      if (args.some((word) => word.value === null))
        return unreadable(scan, `\`eval\` runs a string only known when it runs (\`${shorten(args.map((word) => word.text).join(' '))}\`)`);
      return judgeCommandString(scan, 'eval', literal(args.map((word) => word.value).join(' ')), input.depth, marker);
    }
    if (program === 'trap') {
      push(true);
      const args = words.slice(1).filter((word) => !/^-[lp]+$/.test(word.value ?? ''));
      // with one argument trap resets a signal; `-` and '' reset or ignore; anything else is a command string run later
      if (args.length >= 2 && args[0].value !== '-' && args[0].value !== '') judgeCommandString(scan, 'trap', args[0], input.depth, marker);
      return;
    }
    if (program === 'tee') {
      push(false);
      let options = true;
      for (const word of words.slice(1)) {
        if (options && word.value === '--') options = false;
        else if (options && word.value?.startsWith('-') && word.value.length > 1) continue;
        else recordWrite(scan, word);
      }
      return;
    }
    if (program === 'find') {
      push(false);
      for (let index = 1; index < words.length; index++) {
        const value = words[index].value;
        if (value !== null && FIND_WRITE_ACTIONS.has(value) && words[index + 1]) recordWrite(scan, words[++index]);
        if (value === null || !FIND_EXEC_ACTIONS.has(value)) continue;
        let end = index + 1;
        while (end < words.length && words[end].value !== ';' && words[end].value !== '+') end++;
        judgeSimpleCommand(scan, { words: words.slice(index + 1, end), env: [], depth: input.depth, marker: '{}' });
        index = end;
      }
      return;
    }
    const wrapper = SHELL_WRAPPERS[program];
    // `command -v rm` only looks a name up
    if (!wrapper || (program === 'command' && words.some((word) => word.value === '-v' || word.value === '-V'))) return push(false);
    if (program === 'coproc' && words.some((word) => word.value === '{' || word.value === '(')) {
      push(false);
      return unreadable(scan, '`coproc` with a compound command');
    }
    if (program === 'flock') {
      const at = words.findIndex((word) => word.value === '-c' || word.value === '--command');
      if (at >= 0) {
        push(true);
        return judgeCommandString(scan, 'flock -c', words[at + 1], input.depth, marker);
      }
    }
    if (program === 'env') env = [...env];
    const rest = program === 'env' ? unwrapEnv(scan, words, env) : afterWrapper(words, wrapper);
    if (rest === null) return push(false);
    // a wrapper with no command (`env`, `exec >log`, `xargs`) is itself the command
    if (!rest.length) return push(false);
    push(wrapper.transparent);
    if (program === 'busybox' && (BASH_LIKE_SHELLS.has(rest[0].value ?? '') || rest[0].value === 'hush'))
      return unreadable(scan, '`busybox` runs its own shell, which the rules do not parse');
    if (program === 'xargs') {
      // xargs appends its input to the command, and -I/-i/--replace substitute it in place of a marker
      const own = words.slice(0, words.length - rest.length);
      const at = own.findIndex((word) => /^(-I|-i|--replace)/.test(word.value ?? ''));
      const option = at < 0 ? null : own[at].value!;
      marker =
        option === null
          ? null
          : option === '-I'
            ? (own[at + 1]?.value ?? '')
            : option.startsWith('--')
              ? option.split('=')[1] || '{}'
              : option.slice(2) || '{}';
      words = [...rest, { value: null, text: '{}', pattern: false }];
      env = [];
      continue;
    }
    words = rest;
  }
};

/** .what = records a file a word names as written to, unless it is a harmless device */
const recordWrite = (scan: Scan, word: Word) => {
  if (word.value === null || word.pattern)
    scan.found.writes.push({ path: null, shown: word.text, why: `the file \`${shorten(word.text)}\` is only known when it runs` });
  else if (!isHarmlessDevice(word.value)) scan.found.writes.push({ path: word.value, shown: word.text });
};

/** .what = judges a redirect: an output one is a write to its target; fd duplications and inputs are not */
const judgeRedirect = (scan: Scan, node: Node) => {
  const operator = node.children.find((child) => !child.isNamed)?.type ?? '';
  const destination = node.childForFieldName('destination');
  if (!destination || destination.type === 'process_substitution') return;
  if (!['>', '>>', '>|', '&>', '&>>', '<>', '>&'].includes(operator)) return;
  const target = resolveWord(destination);
  // `>&2`, `>&-`: duplicate or close a descriptor
  if (operator === '>&' && (target.value === '-' || isInteger(target.value))) return;
  recordWrite(scan, target);
};

/** .what = judges a variable assignment: a dangerous name is unreadable; a non-number value taints the name */
const judgeAssignment = (scan: Scan, node: Node, inArithmetic: boolean) => {
  const nameNode = node.childForFieldName('name');
  const name = nameNode?.type === 'subscript' ? (nameNode.childForFieldName('name')?.text ?? '') : (nameNode?.text ?? '');
  if (isDangerousVariable(name)) return unreadable(scan, `assigning ${name} makes bash run or find commands the rules cannot see`);
  const value = node.childForFieldName('value');
  if (!inArithmetic && value && value.type !== 'arithmetic_expansion' && !isInteger(resolveWord(value).value)) scan.tainted.add(name);
};

/** .what = judges a `${…}` expansion: @ transformations and indirection are unreadable; offsets are arithmetic */
const judgeExpansion = (scan: Scan, node: Node) => {
  const operators = node.childrenForFieldName('operator').map((child) => child.text);
  if (operators.includes('@')) unreadable(scan, `the transformation \`${shorten(node.text)}\` can run commands held in a value`);
  if (operators[0] === '!' && node.children[1]?.text === '!' && !/^\$\{!\w+(\[[@*]\]|[@*])\}$/.test(node.text))
    unreadable(scan, `the indirect expansion \`${shorten(node.text)}\` can evaluate a subscript held in a value`);
  const variable = node.namedChildren.find((child) => child.type === 'variable_name')?.text;
  if (variable && operators.some((operator) => operator === '=' || operator === ':=')) scan.tainted.add(variable);
  // `${x:offset:length}`: each part after a bare `:` is arithmetic
  node.children.forEach((child, index) => {
    if (node.children[index - 1]?.text === ':' && node.fieldNameForChild(index - 1) === 'operator' && child.isNamed)
      scan.arithmetic.push(child.text);
  });
  // the grammar reads `$((x))` inside `${…}` as a subshell running `x`, and `$[x]` or one after `#` as plain text: bash
  // evaluates both as arithmetic, so each is judged as such; one whose end cannot be found is unreadable
  const found = [...node.text.matchAll(/\$\(\(([\s\S]*?)\)\)|\$\[([\s\S]*?)\]/g)];
  for (const match of found) scan.arithmetic.push(match[1] ?? match[2]);
  if (countUnescaped(node.text, '$((') + countUnescaped(node.text, '$[') > found.length)
    unreadable(scan, `arithmetic inside \`${shorten(node.text)}\` the parser did not read`);
};

/** .what = judges a `[ ]` or `[[ ]]` test: `-v name` names a variable; `[[ a -eq b ]]` evaluates both sides as arithmetic */
const judgeTest = (scan: Scan, node: Node) => {
  const program = node.children[0]?.type ?? '[';
  for (const unary of node.descendantsOfType('unary_expression')) {
    const operator = unary.childForFieldName('operator')?.text;
    const operand = unary.namedChildren.at(-1);
    if ((operator === '-v' || operator === '-R') && operand) judgeVariableName(scan, program, resolveWord(operand), { assigns: false });
  }
  if (program !== '[[') return;
  for (const binary of node.descendantsOfType('binary_expression')) {
    if (!ARITHMETIC_TESTS.has(binary.childForFieldName('operator')?.text ?? '')) continue;
    for (const side of [binary.childForFieldName('left'), binary.childForFieldName('right')])
      if (side) scan.arithmetic.push(side.type === 'simple_expansion' ? side.text : (resolveWord(side).value ?? side.text));
  }
};

/** .what = occurrences of an opener in a text, not counting backslash-escaped ones */
const countUnescaped = (text: string, opener: string): number =>
  text
    .split(opener)
    .slice(0, -1)
    .filter((before) => !/(^|[^\\])(\\\\)*\\$/.test(before)).length;

/**
 * .what = judges a here-doc: with an unquoted delimiter its body expands, and every substitution in it must have been parsed
 * .why = the grammar does not parse backquotes in a body, nor `$(…)` on a line led by a tab under `<<-`; bash runs both
 */
const judgeHereDoc = (scan: Scan, node: Node) => {
  const start = node.children.find((child) => child.type === 'heredoc_start')?.text ?? '';
  const body = node.children.find((child) => child.type === 'heredoc_body');
  if (/['"\\]/.test(start) || !body) return;
  const parsed = ['command_substitution', 'arithmetic_expansion', 'expansion'].flatMap((type) => body.descendantsOfType(type)).length;
  const written = ['$(', '${', '$['].reduce((sum, opener) => sum + countUnescaped(body.text, opener), 0);
  if (countUnescaped(body.text, '`') || written > parsed)
    unreadable(scan, `a here-doc body with substitutions the parser did not read (\`${shorten(body.text)}\`)`);
};

/** .what = the arithmetic inside `$(( ))`, `$[ ]`, `(( ))` or `for (( ))`, without its delimiters */
const arithmeticBody = (node: Node): string => {
  const open = node.children.findIndex((child) => ['$((', '$[', '(('].includes(child.type));
  const close = node.children.findIndex((child) => child.type === '))' || child.type === ']');
  return node.children
    .slice(open + 1, close < 0 ? undefined : close)
    .map((child) => child.text)
    .join(' ');
};

/**
 * .what = walks the tree: judges each command, redirect, assignment, expansion and arithmetic; unreadable on parse errors
 * .why = one walk over every node reaches commands wherever bash runs them: substitutions, here-docs, case items,
 *        function bodies, conditions
 */
const walk = (scan: Scan, node: Node, depth: number, inArithmetic: boolean, nesting: number, damaged: boolean) => {
  if (depth > MAX_TREE_DEPTH) return unreadable(scan, `syntax nested more than ${MAX_TREE_DEPTH} levels deep`);
  // only a damaged tree (hasError covers missing nodes too) is searched for error nodes: each check crosses into wasm
  if (damaged && node.isError) unreadable(scan, `bash syntax that does not parse, near \`${shorten(node.text)}\``);
  else if (damaged && node.isMissing) unreadable(scan, `a missing \`${node.type}\``);
  const children = node.children;
  // the grammar sometimes swallows a line break into a word or token (`ls\n\\rm x`, `` `:`\n`rm x` ``); bash ends a command there
  if (!children.length && !TEXT_TOKENS.has(node.type) && /(^|[^\\])\n/.test(node.text) && node.text.trim())
    unreadable(scan, `a line break the parser read as part of \`${shorten(node.text)}\``);
  let arithmetic = inArithmetic;
  switch (node.type) {
    case 'comment':
      return;
    case 'heredoc_redirect':
      judgeHereDoc(scan, node);
      break;
    case 'command': {
      const name = node.childForFieldName('name');
      if (!name) break;
      const env = node.namedChildren
        .filter((child) => child.type === 'variable_assignment' && !isInertVariable(child.childForFieldName('name')?.text ?? ''))
        .map((child) => child.text);
      const words = [name, ...node.childrenForFieldName('argument')].map(resolveWord);
      judgeSimpleCommand(scan, { words, env, depth: nesting, marker: null });
      break;
    }
    case 'declaration_command':
    case 'unset_command': {
      const program = node.children[0]?.text ?? '';
      judgeDeclarationWords(
        scan,
        program,
        node.namedChildren.filter((child) => child.type !== 'variable_assignment' && child.type !== 'variable_name').map(resolveWord),
      );
      break;
    }
    case 'test_command':
      judgeTest(scan, node);
      break;
    case 'variable_assignment':
      judgeAssignment(scan, node, inArithmetic);
      break;
    case 'file_redirect':
      judgeRedirect(scan, node);
      break;
    case 'expansion':
      judgeExpansion(scan, node);
      break;
    case 'arithmetic_expansion':
    case 'c_style_for_statement':
      scan.arithmetic.push(arithmeticBody(node));
      arithmetic = true;
      break;
    case 'compound_statement':
      if (node.children[0]?.type === '((') {
        scan.arithmetic.push(arithmeticBody(node));
        arithmetic = true;
      }
      break;
    case 'subscript': {
      const index = node.childForFieldName('index')?.text ?? '';
      if (!inArithmetic && index !== '@' && index !== '*') scan.arithmetic.push(index);
      break;
    }
    case 'array':
      // `a=([i]=1)`: an indexed array's keys are arithmetic
      for (const child of node.namedChildren)
        if (child.text.startsWith('[')) scan.arithmetic.push(child.text.slice(1, child.text.indexOf(']=') >>> 0));
      break;
    case 'for_statement': {
      const variable = node.childForFieldName('variable')?.text;
      const values = node.childrenForFieldName('value');
      if (variable && (!values.length || !values.every((value) => isInteger(resolveWord(value).value)))) scan.tainted.add(variable);
      break;
    }
  }
  for (const child of children) {
    // the c-style for's own clauses are arithmetic; its body is not
    const inner = node.type === 'c_style_for_statement' ? child.type !== 'do_group' && child.type !== 'compound_statement' : arithmetic;
    walk(scan, child, depth + 1, inner, nesting, damaged);
  }
};

/** .what = parses one line (the outer one, or a `bash -c` string inside it) and walks it */
const scanLine = (scan: Scan, line: string, nesting: number) => {
  // the grammar misreads a line continuation glued to a word or at a line's start (`r\<newline>m` is rm to bash)
  const glued = [...line.matchAll(/(\\+)\n(?=\S)/g)].find(
    (match) => match[1].length % 2 === 1 && (match[1].length > 1 || !/[ \t]/.test(line[match.index - 1] ?? '\n')),
  );
  if (glued)
    unreadable(scan, `a line continuation inside a word, near \`${shorten(line.slice(Math.max(0, glued.index - 10), glued.index + 12))}\``);
  const tree = scan.parse(line);
  try {
    walk(scan, tree.rootNode, 0, false, nesting, tree.rootNode.hasError);
  } finally {
    // the tree lives in wasm memory: freed now, not by the garbage collector
    tree.delete();
  }
};

/**
 * .what = why an arithmetic text could run a command, or null when it is inert: only numbers, operators and names
 *         the line never sets to anything but a number
 * .why = bash evaluates a subscript inside arithmetic, and a variable's value as arithmetic in turn:
 *        `x='a[$(rm y)]'; echo $((x))` runs rm
 */
const arithmeticRisk = (text: string, tainted: Set<string>): string | null => {
  const plain = text.replace(/\$\{?([A-Za-z_]\w*)\}?/g, '$1').replace(/\$[#?$!]/g, '0');
  if (/[$`[\]'"\\{}]/.test(plain))
    return `the arithmetic \`${shorten(text)}\` holds a subscript, expansion or quote that bash evaluates, and that can run commands`;
  const name = [...plain.matchAll(/(?<![\w#])[A-Za-z_]\w*/g)].map((match) => match[0]).find((candidate) => tainted.has(candidate));
  return name
    ? `the arithmetic \`${shorten(text)}\` reads ${name}, which this line sets to a value bash would evaluate, and that can run commands`
    : null;
};

/**
 * .what = reads a bash line from a real parse (tree-sitter-bash): the commands it would run, the files it writes by
 *         redirect or tee, and what it does that cannot be fully understood
 * .why = rules are judged on what bash would do, not on the text; what the analysis cannot read is reported, never guessed
 */
export const analyzeShellCommand = async (input: { command: string }): Promise<ShellAnalysis> => {
  const { parse } = await genShellParser();
  const scan: Scan = {
    parse,
    found: { commands: [], writes: [], unreadable: [] },
    arithmetic: [],
    tainted: new Set(),
    changesDirectory: false,
  };
  scanLine(scan, input.command, 0);
  for (const text of scan.arithmetic) {
    const risk = arithmeticRisk(text, scan.tainted);
    if (risk) unreadable(scan, risk);
  }
  // after a cd, a relative target lands somewhere the line decided
  if (scan.changesDirectory)
    scan.found.writes = scan.found.writes.map((write) =>
      write.path !== null && !isAbsolute(write.path)
        ? { path: null, shown: write.shown, why: `the line changes directory, so where \`${shorten(write.shown)}\` lands is not known` }
        : write,
    );
  return scan.found;
};
