/**
 * .what = a failed call to a search provider, with a message that says what failed
 * .why = the toolbox turns it into an error result the model reads; it never leaves the toolbox
 */
export class WebSearchError extends Error {
  public override readonly name = 'WebSearchError';
}
