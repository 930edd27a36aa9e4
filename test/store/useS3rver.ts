// a real S3-protocol server (s3rver) for the tests of the shared ref store: on 127.0.0.1, a random port, a temp dir
import { rm } from 'node:fs/promises';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll, beforeAll } from 'vitest';
import { tempDir } from '#test-helpers/fs.js';

/** s3rver's one account: it checks every request's signature against this key pair */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** the bucket every test's store lives in (each test its own prefix) */
export const BUCKET = 'fleet';

export interface RunningS3rver {
  endpoint: string;
  /** a client of the test's own, with the right credentials: to look at and forge objects as an attacker with write access would */
  client: S3Client;
  /** every key under a prefix */
  keys: (prefix: string) => Promise<string[]>;
}

/** starts s3rver for the file with the bucket `fleet`; `s3()` returns it */
export const useS3rver = () => {
  let server: S3rver;
  let dir: string;
  let running: RunningS3rver;
  beforeAll(async () => {
    dir = tempDir('bhrain-s3rver-');
    server = new S3rver({ address: '127.0.0.1', port: 0, directory: dir, silent: true, configureBuckets: [{ name: BUCKET }] });
    const { port } = await server.run();
    const endpoint = `http://127.0.0.1:${port}`;
    // the test's own client: the SDK's node-version notice is noise here as in the CLI
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
    const client = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1', credentials: S3RVER_CREDENTIALS });
    const keys = async (prefix: string) => {
      const found: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: token }));
        found.push(...(page.Contents ?? []).map((object) => object.Key!));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return found.sort();
    };
    running = { endpoint, client, keys };
  });
  afterAll(async () => {
    running?.client.destroy();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });
  return { s3: () => running };
};
