import { FilesToolInputError } from './FilesToolInputError.js';

/** .what = a number the model sent, or the same number sent as a string ("10"), which models often do */
const asNumber = (value: unknown): number | undefined => {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return undefined;
};

/**
 * .what = typed readers of a tool call's input fields, each throwing FilesToolInputError with the field's name
 * .why = the schema is advisory to the model; the executor must still check what arrived
 */
export const readToolInput = {
  /** a required string; nonEmpty rejects '' */
  string: (input: Record<string, unknown>, key: string, options: { nonEmpty?: boolean } = {}): string => {
    const value = input[key];
    if (typeof value !== 'string')
      throw new FilesToolInputError(`\`${key}\` is required and must be a string (got ${describeType(value)}).`);
    if (options.nonEmpty && value === '') throw new FilesToolInputError(`\`${key}\` must not be empty.`);
    return value;
  },

  /** an optional string; null counts as absent */
  optionalString: (input: Record<string, unknown>, key: string): string | undefined => {
    const value = input[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw new FilesToolInputError(`\`${key}\` must be a string when given (got ${describeType(value)}).`);
    return value;
  },

  /** an optional whole number no smaller than min */
  optionalInteger: (input: Record<string, unknown>, key: string, options: { min: number }): number | undefined => {
    const raw = input[key];
    if (raw === undefined || raw === null) return undefined;
    const value = asNumber(raw);
    if (value === undefined || !Number.isInteger(value) || value < options.min)
      throw new FilesToolInputError(`\`${key}\` must be a whole number >= ${options.min} when given (got ${JSON.stringify(raw)}).`);
    return value;
  },

  /** an optional boolean; "true"/"false" strings are accepted */
  optionalBoolean: (input: Record<string, unknown>, key: string): boolean | undefined => {
    const raw = input[key];
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw === 'boolean') return raw;
    if (raw === 'true' || raw === 'false') return raw === 'true';
    throw new FilesToolInputError(`\`${key}\` must be true or false when given (got ${JSON.stringify(raw)}).`);
  },
};

const describeType = (value: unknown): string =>
  value === undefined ? 'nothing' : value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
