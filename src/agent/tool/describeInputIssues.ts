import type { $ZodIssue } from 'zod/v4/core';

/** .what = a value's JSON type as the model knows it: integer apart from number, null and array apart from object */
const typeOf = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;

/** .what = an issue path ([edits, 0, old]) written as the model reads it (input.edits[0].old) */
const toPath = (path: readonly PropertyKey[]): string =>
  'input' +
  path
    .map((part) =>
      typeof part === 'number'
        ? `[${part}]`
        : /^[A-Za-z_$][\w$]*$/.test(String(part))
          ? `.${String(part)}`
          : `[${JSON.stringify(String(part))}]`,
    )
    .join('');

/** zod's names for the types it expected, in JSON Schema's words */
const EXPECTED: Record<string, string> = { int: 'integer', nonoptional: 'present', undefined: 'absent', void: 'absent' };

/** .what = one zod issue as a line the model can act on: where, and what is wrong there (the wording ajv's lines had) */
const describeIssue = (issue: $ZodIssue, at: readonly PropertyKey[] = []): string[] => {
  const path = toPath([...at, ...issue.path]);
  switch (issue.code) {
    case 'invalid_type':
      return [
        issue.input === undefined && issue.path.length > 0
          ? `${path} is required`
          : `${path} must be ${EXPECTED[issue.expected] ?? issue.expected}, got ${typeOf(issue.input)}`,
      ];
    case 'unrecognized_keys':
      return issue.keys.map((key) => `${toPath([...at, ...issue.path, key])} is not a known field`);
    case 'invalid_value':
      return [
        issue.values.length === 1
          ? `${path} must be ${JSON.stringify(issue.values[0])}, got ${JSON.stringify(issue.input)}`
          : `${path} must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}, got ${JSON.stringify(issue.input)}`,
      ];
    case 'too_small':
    case 'too_big': {
      const [bound, sign] =
        issue.code === 'too_small' ? [issue.minimum, issue.inclusive ? '>=' : '>'] : [issue.maximum, issue.inclusive ? '<=' : '<'];
      if (issue.origin === 'string' || issue.origin === 'array')
        return [
          `${path} must have ${issue.code === 'too_small' ? 'at least' : 'at most'} ${bound} ${issue.origin === 'string' ? 'characters' : 'items'}`,
        ];
      return [`${path} must be ${sign} ${bound}, got ${JSON.stringify(issue.input)}`];
    }
    case 'invalid_union': {
      const choices = issue.errors.map((branch) => branch.flatMap((each) => describeIssue(each, [...at, ...issue.path])).join(' and '));
      return [`${path} must match one of its choices: ${choices.join(', or ') || 'none matched'}`];
    }
    case 'invalid_format':
      return [`${path} must be a valid ${issue.format}${issue.pattern ? ` (${issue.pattern})` : ''}`];
    case 'not_multiple_of':
      return [`${path} must be a multiple of ${issue.divisor}`];
    case 'invalid_key':
    case 'invalid_element':
      return issue.issues.flatMap((each) => describeIssue(each, [...at, ...issue.path]));
    default:
      // a refinement: its message is written for the model ("must not be empty"); zod's default says nothing more
      return [`${path} ${issue.message && issue.message !== 'Invalid input' ? issue.message : 'is not valid'}`];
  }
};

/** .what = zod's issues for one input as readable lines, in the order zod found them */
export const describeInputIssues = (issues: readonly $ZodIssue[]): string[] => issues.flatMap((issue) => describeIssue(issue));

/**
 * .what = the one message a call whose input does not fit its tool's schema is answered with
 * .why = the model reads what is wrong, where, and that it should call again: the same words for every tool and schema kind
 */
export const describeInputProblems = (name: string, problems: readonly string[]): string =>
  `the arguments of ${name} do not fit its schema: ${problems.join('; ')}. Call ${name} again with corrected arguments`;
