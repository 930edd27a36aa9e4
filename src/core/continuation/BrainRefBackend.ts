// types only: no code, so the S3 backend (a lazy chunk of the bundle) shares nothing with the store at run time but the
// errors every module loads

/** .what = the kinds of object a ref store keeps: episodes, series, and the marks of compacted episodes */
export type BrainRefKind = 'episode' | 'series' | 'compacted';

/**
 * .what = where a ref store keeps its objects: the bytes of one object by kind and hash, and the hashes that start with a
 *         prefix; nothing else. The store (genBrainRefStore) verifies every object read against its hash, whatever the backend
 * .why = refs are content-addressed and immutable, so any blob store can keep them: the local filesystem (the default),
 *        or an S3-compatible bucket shared by many runners (genS3RefBackend)
 */
export interface BrainRefBackend {
  /** the store as messages name it: a directory, or s3://bucket/prefix */
  readonly location: string;
  /** where one kind is kept, as messages name it */
  whereOf(kind: BrainRefKind): string;
  /** how a user points bhrain at the store a ref was saved in, for "not found": "set BHRAIN_HOME to the store it used" */
  readonly howToPoint: string;
  /** writes one object; the same hash always has the same bytes, so a write never conflicts. Where it went; a RefStoreWriteError */
  write(kind: BrainRefKind, hash: string, text: string): Promise<string>;
  /** the hashes of the objects of one kind that start with a prefix; a BadRequestError when the store cannot be listed */
  list(kind: BrainRefKind, prefix: string): Promise<string[]>;
  /** the text of one object; null when there is none; a BadRequestError when it cannot be read */
  read(kind: BrainRefKind, hash: string): Promise<string | null>;
  /** whether an object exists; a BadRequestError when the store cannot tell */
  has(kind: BrainRefKind, hash: string): Promise<boolean>;
}
