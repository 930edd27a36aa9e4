/**
 * .what = the model's arguments do not fit the tool: a missing field, a wrong type, an out-of-range number
 * .why = the box turns it into an error result that names the field and what was expected, so the model can retry
 */
export class FilesToolInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FilesToolInputError';
  }
}
