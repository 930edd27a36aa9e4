import type { S3Client } from '@aws-sdk/client-s3';

import { BadRequestError, RefStoreReadError, RefStoreWriteError } from '../contract/errors.js';
import type { BrainRefBackend, BrainRefKind } from './BrainRefBackend.js';

/**
 * .what = the folder each kind of object is kept under, below the store's root: the local store's layout (<home>/refs/,
 *         genLocalRefBackend), so a local store synced to a bucket (`aws s3 sync`) is a store of this backend
 */
const FOLDERS: Record<BrainRefKind, string> = { episode: 'refs/episodes', series: 'refs/series', compacted: 'refs/compacted' };
const refKindFolder = (kind: BrainRefKind) => FOLDERS[kind];

/** .what = how many times one request to the store is tried (the first try included), and how long each try may take */
export interface S3StoreRetry {
  readonly maxAttempts: number;
  /** to connect */
  readonly connectionTimeoutMs: number;
  /** without an answer, once connected */
  readonly requestTimeoutMs: number;
}

/** .what = the store's bounds by default: 3 tries, each with 5 s to connect and 30 s without an answer */
export const S3_STORE_RETRY: S3StoreRetry = Object.freeze({ maxAttempts: 3, connectionTimeoutMs: 5_000, requestTimeoutMs: 30_000 });

/** .what = what an s3:// store names: a bucket, and the key prefix (no leading or trailing slash; '' for the bucket's root) */
export interface S3StoreSpec {
  bucket: string;
  prefix: string;
}

/**
 * .what = an s3:// URL as its bucket and prefix; a BadRequestError when it is not one
 * .note = the CLI checks a store setting by its rule (the settings table's) before it gets here: this decodes it
 */
export const parseS3StoreUrl = (url: string): S3StoreSpec => {
  const parsed = (() => {
    try {
      return new URL(url);
    } catch {
      return null;
    }
  })();
  if (!parsed || parsed.protocol !== 's3:' || !parsed.hostname || parsed.search || parsed.hash)
    throw new BadRequestError(
      `'${url}' is not a ref store: give an s3:// URL naming a bucket and an optional key prefix, e.g. s3://my-bucket/bhrain`,
    );
  return { bucket: parsed.hostname, prefix: decodeURIComponent(parsed.pathname).replace(/^\/+|\/+$/g, '') };
};

/** .what = the SDK's switch for its warning about node versions it will need (see getClient) */
const NODE_VERSION_WARNING = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';

/** .what = the error code of a failed S3 call: the service's (NoSuchKey, AccessDenied) or node's (ECONNREFUSED) */
const codeOf = (error: unknown): string => {
  const found = error as { name?: string; code?: string; Code?: string; cause?: { code?: string } };
  return found?.code ?? found?.cause?.code ?? found?.Code ?? found?.name ?? 'Error';
};

/** .what = the HTTP status of a failed S3 call, when the service answered */
const statusOf = (error: unknown): number | undefined => (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;

const REFUSED_CREDENTIALS = ['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'InvalidToken', 'ExpiredToken', 'Forbidden'];

/**
 * .what = why an S3 call failed, and how to fix it, in one clause: refused credentials, no credentials, no bucket, an
 *         unreachable endpoint (after the bounded retries), or the service's own code and message
 */
const explain = (
  error: unknown,
  where: { location: string; endpoint: string | undefined; bucket: string; maxAttempts: number },
): string => {
  const code = codeOf(error);
  const status = statusOf(error);
  const message = (error as Error)?.message ?? String(error);
  const at = where.endpoint ? ` at ${where.endpoint}` : '';
  if (REFUSED_CREDENTIALS.includes(code) || status === 403)
    return `the store${at} refused the credentials (${code}${status ? `, HTTP ${status}` : ''}): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), and that they may read and write ${where.location}`;
  if (code === 'CredentialsProviderError' || /Could not load credentials/i.test(message))
    return `no AWS credentials were found (${message}): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE`;
  if (code === 'NoSuchBucket') return `the bucket ${where.bucket} does not exist${at}: create it, or fix BHRAIN_STORE / --store`;
  if (/Region is missing/i.test(message)) return `no AWS region is set: set AWS_REGION (or a region in your AWS profile)`;
  if (status === undefined && (code === 'TimeoutError' || /^E[A-Z]+$/.test(code)))
    return `the store${at || ` (${where.location})`} could not be reached after ${where.maxAttempts} attempts (${code}: ${message}); check BHRAIN_S3_ENDPOINT and the network, and run again`;
  return `${code}${status ? ` (HTTP ${status})` : ''}: ${message}`;
};

/**
 * .what = an S3-compatible ref backend: each object at <prefix>/refs/<kind folder>/<hash>.json in one bucket, the same
 *         layout as the local store's <home>/refs/ (so `aws s3 sync` carries a local store over)
 * .why = many runners (CI jobs on machines that come and go) share one store: a series started in job A continues in job
 *        B by its hash. Objects are content-addressed, so a write is a plain PUT: the same key always gets the same bytes,
 *        concurrent writers of one ref write the same object and none conflicts, and a damaged object is replaced by the
 *        next write of it. The store verifies every read against its hash (genBrainRefStore)
 * .note = the SDK is loaded on the first call (`@aws-sdk/client-s3`): a library user who never uses S3 never loads it.
 *         Credentials and region come from the SDK's default chain (AWS_* variables, AWS_PROFILE, the shared files,
 *         the instance's role); `endpoint` (BHRAIN_S3_ENDPOINT) points it at another S3-compatible service, addressed
 *         path-style (http://host/bucket/key), which such services support where virtual hosts may not resolve
 */
export const genS3RefBackend = (input: {
  bucket: string;
  prefix?: string;
  /** an S3-compatible service's URL, e.g. http://127.0.0.1:9000 (MinIO); absent = AWS S3 */
  endpoint?: string;
  /** the region; absent = the SDK's chain (AWS_REGION, the profile), or us-east-1 with an endpoint */
  region?: string;
  /** the environment the region and endpoint defaults are read from */
  env?: Record<string, string | undefined>;
  /** how hard each request is tried (attempts, and per try the time to connect and without an answer); S3_STORE_RETRY where absent */
  retry?: Partial<S3StoreRetry>;
}): BrainRefBackend => {
  const retry = { ...S3_STORE_RETRY, ...input.retry };
  const prefix = (input.prefix ?? '').replace(/^\/+|\/+$/g, '');
  const location = `s3://${input.bucket}${prefix ? `/${prefix}` : ''}`;
  const where = { location, endpoint: input.endpoint, bucket: input.bucket, maxAttempts: retry.maxAttempts };
  const folderOf = (kind: BrainRefKind) => `${prefix ? `${prefix}/` : ''}${refKindFolder(kind)}/`;
  const keyOf = (kind: BrainRefKind, hash: string) => `${folderOf(kind)}${hash}.json`;
  const whereOf = (kind: BrainRefKind) => `${location}/${refKindFolder(kind)}`;
  if (input.endpoint !== undefined) {
    let protocol = '';
    try {
      protocol = new URL(input.endpoint).protocol;
    } catch {
      // said below
    }
    if (!['http:', 'https:'].includes(protocol))
      throw new BadRequestError(
        `BHRAIN_S3_ENDPOINT '${input.endpoint}' is not an http(s) URL: give the S3-compatible service's URL, e.g. http://127.0.0.1:9000`,
      );
  }

  let client: Promise<{ client: S3Client; sdk: typeof import('@aws-sdk/client-s3') }> | undefined;
  const getClient = () =>
    (client ??= import('@aws-sdk/client-s3').then((loaded) => {
      // bundled (the CLI), the SDK's CommonJS build is the default export of the module
      const sdk = ('S3Client' in loaded ? loaded : (loaded as { default: typeof loaded }).default) as typeof loaded;
      const env = input.env ?? process.env;
      const region = input.region ?? (input.endpoint ? env.AWS_REGION || 'us-east-1' : undefined);
      // the SDK warns on a node below 22 that its versions after January 2027 will need 22. bhrain needs 22 itself, so
      // the warning says nothing to a user; it is kept off for a node 20 that still runs it (a test machine), lest it be
      // noise on every run's stderr. Off while the client is made (it is said there, once), the variable put back as it was
      const warning = process.env[NODE_VERSION_WARNING];
      process.env[NODE_VERSION_WARNING] = 'true';
      try {
        return { sdk, client: newClient(sdk, region) };
      } finally {
        if (warning === undefined) delete process.env[NODE_VERSION_WARNING];
        else process.env[NODE_VERSION_WARNING] = warning;
      }
    }));
  const newClient = (sdk: typeof import('@aws-sdk/client-s3'), region: string | undefined) =>
    new sdk.S3Client({
      ...(region ? { region } : {}),
      ...(input.endpoint ? { endpoint: input.endpoint, forcePathStyle: true } : {}),
      // bounded: a network fault is retried (the SDK's standard backoff), at most this many tries of this long each. The
      // time without an answer is the socket's inactivity timeout, which fails the try; the handler's requestTimeout
      // only logs a warning when passed (unless opted in), so with it alone a store that takes the request and never
      // answers held the run forever
      maxAttempts: retry.maxAttempts,
      requestHandler: { connectionTimeout: retry.connectionTimeoutMs, socketTimeout: retry.requestTimeoutMs },
    });

  const write = async (kind: BrainRefKind, hash: string, text: string): Promise<string> => {
    const key = keyOf(kind, hash);
    try {
      const { client, sdk } = await getClient();
      await client.send(
        // the length given: for an empty body (a compaction mark) the SDK would otherwise warn on stderr of a stream of
        // unknown length
        new sdk.PutObjectCommand({
          Bucket: input.bucket,
          Key: key,
          Body: text,
          ContentLength: Buffer.byteLength(text),
          ContentType: 'application/json; charset=utf-8',
        }),
      );
      return `${location}/${refKindFolder(kind)}/${hash}.json`;
    } catch (error) {
      throw new RefStoreWriteError(
        `could not save the ${kind} ${hash} to the ref store at ${location}: ${explain(error, where)}. Earlier refs are intact`,
        { cause: error },
      );
    }
  };

  const list = async (kind: BrainRefKind, hashPrefix: string): Promise<string[]> => {
    const folder = folderOf(kind);
    const hashes: string[] = [];
    try {
      const { client, sdk } = await getClient();
      let token: string | undefined;
      do {
        const page = await client.send(
          new sdk.ListObjectsV2Command({ Bucket: input.bucket, Prefix: `${folder}${hashPrefix}`, ContinuationToken: token }),
        );
        for (const { Key } of page.Contents ?? [])
          if (Key?.endsWith('.json') && !Key.slice(folder.length).includes('/')) hashes.push(Key.slice(folder.length, -'.json'.length));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (error) {
      throw new RefStoreReadError(`cannot read the ref store at ${whereOf(kind)}: ${explain(error, where)}`, { cause: error });
    }
    return hashes;
  };

  const read = async (kind: BrainRefKind, hash: string): Promise<string | null> => {
    try {
      const { client, sdk } = await getClient();
      const found = await client.send(new sdk.GetObjectCommand({ Bucket: input.bucket, Key: keyOf(kind, hash) }));
      return (await found.Body?.transformToString('utf8')) ?? '';
    } catch (error) {
      if (codeOf(error) === 'NoSuchKey' || statusOf(error) === 404) return null;
      throw new RefStoreReadError(`the ${kind} ${hash} cannot be read from the ref store at ${location}: ${explain(error, where)}`, {
        cause: error,
      });
    }
  };

  const has = async (kind: BrainRefKind, hash: string): Promise<boolean> => {
    try {
      const { client, sdk } = await getClient();
      await client.send(new sdk.HeadObjectCommand({ Bucket: input.bucket, Key: keyOf(kind, hash) }));
      return true;
    } catch (error) {
      if (codeOf(error) === 'NotFound' || codeOf(error) === 'NoSuchKey' || statusOf(error) === 404) return false;
      // whether an episode was compacted decides whether it may be continued: unknown is not "no"
      throw new RefStoreReadError(
        `cannot tell whether the ${kind} mark ${hash} is in the ref store at ${location}: ${explain(error, where)}`,
        {
          cause: error,
        },
      );
    }
  };

  return { location, whereOf, howToPoint: `set BHRAIN_STORE to the store it used`, write, list, read, has };
};
