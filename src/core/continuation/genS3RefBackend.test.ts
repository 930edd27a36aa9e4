// the S3 backend through the store, against a real S3-protocol server (s3rver on 127.0.0.1)
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { BUCKET, S3RVER_CREDENTIALS, useS3rver } from '../../../test/store/useS3rver.js';
import { genBrainEpisode } from '../contract/BrainEpisode.js';
import { genBrainExchange } from '../contract/BrainExchange.js';
import { genBrainSeries } from '../contract/BrainSeries.js';
import { BadRequestError, EpisodeCompactedError, RefStoreReadError, RefStoreWriteError } from '../contract/errors.js';
import { genBrainRefStore, openBrainRefStore } from './genBrainRefStore.js';
import { genS3RefBackend, parseS3StoreUrl } from './genS3RefBackend.js';
import { tempDir } from '#test-helpers/fs.js';

const { s3 } = useS3rver();
const episode = genBrainEpisode({ exchanges: [genBrainExchange({ input: 'q', output: 'a' })] });

const series = genBrainSeries({ episodes: [episode] });

// the SDK reads its credentials from the environment: the test's own, restored after
const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
let prefix: string;
let count = 0;
beforeEach(() => {
  process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
  prefix = `lib-${++count}-${Date.now()}`;
});
afterEach(() => {
  for (const [name, value] of [
    ['AWS_ACCESS_KEY_ID', saved.id],
    ['AWS_SECRET_ACCESS_KEY', saved.secret],
  ] as const)
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
});
const genStore = (endpoint = s3().endpoint) => genBrainRefStore({ backend: genS3RefBackend({ bucket: BUCKET, prefix, endpoint }) });

describe('store: the S3 backend', () => {
  it('store: saves by content address and reads back verified, by full hash or unique prefix, in the local layout', async () => {
    const store = genStore();
    expect(store.location).toBe(`s3://${BUCKET}/${prefix}`);
    expect(await store.saveSeries(series)).toBe(`s3://${BUCKET}/${prefix}/refs/series/${series.hash}.json`);
    await store.saveEpisode(episode);
    // saved twice: the same object, no error
    await store.saveSeries(series);
    expect(await s3().keys(`${prefix}/`)).toEqual(
      [`${prefix}/refs/episodes/${episode.hash}.json`, `${prefix}/refs/series/${series.hash}.json`].sort(),
    );
    expect(await store.getSeries(series.hash.slice(0, 8))).toEqual(series);
    expect(await store.getEpisode(episode.hash)).toEqual(episode);
    expect(await store.findRefs(series.hash.slice(0, 8))).toEqual({ episodes: [], series: [series.hash] });
  });

  it('store: a compaction mark made by one store is seen by another on the same bucket: --on-episode refuses it everywhere', async () => {
    await genStore().saveEpisode(episode);
    await genStore().markCompacted([episode.hash]);
    const other = genStore();
    expect(await other.isCompacted(episode.hash)).toBe(true);
    await expect(other.getEpisode(episode.hash)).rejects.toThrow(EpisodeCompactedError);
  });

  it('store: an ambiguous prefix is refused; keys under a deeper folder are not refs', async () => {
    const store = genStore();
    // two series objects that share a prefix (one forged): the prefix names neither
    await store.saveSeries(series);
    const twin = `${series.hash.slice(0, 8)}${'0'.repeat(56)}`;
    await s3().client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${prefix}/refs/series/${twin}.json`, Body: '{}' }));
    await expect(store.getSeries(series.hash.slice(0, 8))).rejects.toThrow(/is ambiguous: 2 series start with it/);
    // a key below the folder is not listed as a hash
    await s3().client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${prefix}/refs/series/${series.hash}/x.json`, Body: '{}' }));
    expect(await store.findRefs(series.hash)).toEqual({ episodes: [], series: [series.hash] });
  });

  it('store: when the store cannot say whether an episode was compacted, the episode is not served (fail closed)', async () => {
    await genStore().saveEpisode(episode);
    // the store lists and reads the episode, then cannot be reached for the mark check (a network fault in between):
    // a backend made of two real ones, the mark check's pointed at an endpoint that resets every connection
    const server = createServer((socket) => socket.resetAndDestroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const down = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const backend = genS3RefBackend({ bucket: BUCKET, prefix, endpoint: s3().endpoint });
      const unreachable = genS3RefBackend({ bucket: BUCKET, prefix, endpoint: down });
      const store = genBrainRefStore({ backend: { ...backend, has: unreachable.has } });
      await expect(store.getEpisode(episode.hash)).rejects.toThrow(RefStoreReadError);
      await expect(store.getEpisode(episode.hash)).rejects.toThrow(
        /cannot tell whether the compacted mark .* could not be reached after 3 attempts/,
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('store: a missing bucket is said as one, for a write (RefStoreWriteError) and a read (RefStoreReadError, exit 2)', async () => {
    const store = genBrainRefStore({ backend: genS3RefBackend({ bucket: 'no-such-bucket', prefix, endpoint: s3().endpoint }) });
    await expect(store.saveSeries(series)).rejects.toThrow(RefStoreWriteError);
    await expect(store.saveSeries(series)).rejects.toThrow(
      /the bucket no-such-bucket does not exist at http:\/\/127\.0\.0\.1:\d+: create it/,
    );
    const read = store.getSeries(series.hash);
    await expect(read).rejects.toThrow(RefStoreReadError);
    await expect(read).rejects.toBeInstanceOf(BadRequestError);
  });

  it('store: an s3:// URL is decoded to a bucket and a prefix; anything else is a BadRequestError', async () => {
    expect(parseS3StoreUrl('s3://ci-refs')).toEqual({ bucket: 'ci-refs', prefix: '' });
    expect(parseS3StoreUrl('s3://ci-refs/a/b/')).toEqual({ bucket: 'ci-refs', prefix: 'a/b' });
    for (const bad of ['https://ci-refs/a', 's3://', 'ci-refs/a', 's3://ci-refs/a?x=1'])
      expect(() => parseS3StoreUrl(bad), bad).toThrow(BadRequestError);
    expect(() => genS3RefBackend({ bucket: 'ci-refs', endpoint: 'localhost:9000' })).toThrow(/is not an http\(s\) URL/);
    // no URL: the local store in home
    const home = tempDir('bhrain-open-');
    expect((await openBrainRefStore({ url: undefined, home })).location).toBe(join(home, 'refs'));
    expect((await openBrainRefStore({ url: `s3://${BUCKET}/x`, home })).location).toBe(`s3://${BUCKET}/x`);
  });

  it('store: importing the package loads no AWS SDK module; using an S3 store does', async () => {
    const loads = join(tempDir('bhrain-sdk-loads-'), 'loads.txt');
    const recorder = join(import.meta.dirname, '..', '..', '..', 'test', 'acceptance', 'fixtures', 'recordModuleLoads.mjs');
    const dist = join(import.meta.dirname, '..', '..', '..', 'dist', 'index.js');
    const run = (code: string) =>
      promisify(execFile)(process.execPath, ['--import', recorder, '--input-type=module', '-e', code], {
        env: { ...process.env, BHRAIN_TEST_LOADS: loads },
      });
    await run(`const { genBrainRefStore, genS3RefBackend } = await import(${JSON.stringify(dist)}); genS3RefBackend({ bucket: 'x' });`);
    expect((await readFile(loads, 'utf8')).split('\n').filter((line) => line.includes('@aws-sdk'))).toEqual([]);
    await run(
      `const { genBrainRefStore, genS3RefBackend } = await import(${JSON.stringify(dist)});
       await genBrainRefStore({ backend: genS3RefBackend({ bucket: ${JSON.stringify(BUCKET)}, endpoint: ${JSON.stringify(s3().endpoint)} }) }).findRefs('abcdef01');`,
    );
    expect((await readFile(loads, 'utf8')).split('\n').filter((line) => line.includes('@aws-sdk')).length).toBeGreaterThan(0);
  });
});

describe('store (hostile): every request to the store is bounded', () => {
  it('store (hostile): a store that takes each request and never answers costs at most maxAttempts tries of requestTimeoutMs each, then a RefStoreWriteError', async () => {
    // the hang a write must not turn into: every try is read to its end and left unanswered
    let puts = 0;
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('data', (chunk) => {
        if (chunk.toString('latin1').startsWith('PUT /')) puts += 1;
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const silent = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const requestTimeoutMs = 400;
      const store = genBrainRefStore({
        backend: genS3RefBackend({ bucket: BUCKET, prefix, endpoint: silent, retry: { requestTimeoutMs } }),
      });
      const started = Date.now();
      const write = store.saveEpisode(episode);
      await expect(write).rejects.toThrow(RefStoreWriteError);
      await expect(write).rejects.toThrow(/could not be reached after 3 attempts \(TimeoutError/);
      const elapsed = Date.now() - started;
      expect(puts).toBe(3);
      // three unanswered tries, and no more than the SDK's backoff between them
      expect(elapsed).toBeGreaterThanOrEqual(3 * requestTimeoutMs - 50);
      expect(elapsed).toBeLessThan(3 * requestTimeoutMs + 3_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('store (hostile): a store that answers every try 503 is tried maxAttempts times, then said with its status', async () => {
    let tries = 0;
    const server = createHttpServer((request, response) => {
      request.resume();
      request.on('end', () => {
        tries += 1;
        response.writeHead(503, { 'content-type': 'application/xml' });
        response.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>busy</Message></Error>');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const busy = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const store = genBrainRefStore({ backend: genS3RefBackend({ bucket: BUCKET, prefix, endpoint: busy, retry: { maxAttempts: 2 } }) });
      const write = store.saveEpisode(episode);
      await expect(write).rejects.toThrow(RefStoreWriteError);
      await expect(write).rejects.toThrow(/SlowDown \(HTTP 503\): busy/);
      expect(tries).toBe(2);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
