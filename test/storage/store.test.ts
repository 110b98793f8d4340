// The service's own bucket against the real local S3 store: an output on disk (a recording) is
// streamed into the store a part at a time, never read into memory whole, and arrives whole; the
// customer's bucket takes a file the same way.
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client as S3Client } from 'minio';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { newFileName } from '../../src/domain/files.ts';
import type { StoreTarget } from '../../src/domain/storage.ts';
import { Sealer } from '../../src/secrets/sealer.ts';
import { uploadOutput } from '../../src/storage/customer-bucket.ts';
import { PART_SIZE, type OutputFile } from '../../src/storage/output-store.ts';
import { FileStore } from '../../src/storage/store.ts';
import { startS3, type S3Server } from '../helpers/stack.ts';

const store = suite('file store');
const BUCKET = 'store-test';
let s3: S3Server;
let files: FileStore;
let dir: string;
let big: OutputFile;

// Collecting garbage on demand: what is measured is what the upload holds, not what awaits collection.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/** A file of `size` random bytes, written a MiB at a time (the test holds none of it either). */
async function randomFile(name: string, size: number): Promise<OutputFile> {
  const path = join(dir, name);
  const out = createWriteStream(path);
  for (let left = size; left > 0; left -= 1 << 20) {
    if (!out.write(randomBytes(Math.min(left, 1 << 20)))) await new Promise((resolve) => out.once('drain', resolve));
  }
  out.end();
  await finished(out);
  return { path, size };
}

/** The most the process's buffers grew above where they stood while `work` ran, in bytes. */
/**
 * What a streamed upload may hold at its peak: well under the file (reading it whole grew 180 MiB
 * for 60), with room for minio's part buffers and the uploaded parts V8 has not yet collected
 * (up to 30 MiB seen under load).
 */
const boundFor = (size: number) => size * 0.75;

async function peakGrowth(work: () => Promise<unknown>): Promise<number> {
  // Freed buffers leave the count once V8's sweeper gets to them: a few rounds settle it.
  for (let round = 0; round < 3; round += 1) {
    collect();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const base = process.memoryUsage().arrayBuffers;
  let peak = base;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    collect();
  }, 50);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  return Math.max(peak, process.memoryUsage().arrayBuffers) - base;
}

const readObject = async (client: S3Client, bucket: string, key: string) => {
  const chunks: Buffer[] = [];
  for await (const chunk of await client.getObject(bucket, key)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

store.before(async () => {
  s3 = await startS3();
  files = new FileStore({
    endPoint: s3.endpoint,
    accessKey: 'S3RVER',
    secretKey: 'S3RVER',
    bucket: BUCKET,
    region: 'us-east-1',
  });
  await files.ensureBucket();
  dir = await mkdtemp(join(tmpdir(), 'shutterbus-store-test-'));
  big = await randomFile('big.mov', 12 * PART_SIZE + 4321);
});
store.after(async () => {
  await s3?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

store(
  'a file on disk is streamed in: it arrives whole, and memory grows by a few parts (half its size at most), not by its size',
  async () => {
    const name = newFileName('mov', new Date(Date.now() + 3600_000));
    const growth = await peakGrowth(() => files.put(name, big, 'mov'));
    assert.ok(
      growth < boundFor(big.size),
      `buffers grew by ${(growth / 2 ** 20).toFixed(1)} MiB for a ${big.size >> 20} MiB file`,
    );
    const stat = await files.stat(name);
    assert.equal([stat?.size, stat?.contentType], [big.size, 'video/quicktime']);
    assert.ok(
      (await readObject(clientOf(s3), BUCKET, `files/${name.slice(0, 8)}/${name}`)).equals(await readFile(big.path)),
    );
  },
);

store('a small file and a buffer are stored alike', async () => {
  const small = await randomFile('small.gif', 3000);
  const fromFile = newFileName('gif', new Date(Date.now() + 3600_000));
  await files.put(fromFile, small, 'gif');
  assert.ok((await files.read(fromFile)).equals(await readFile(small.path)));
  const fromMemory = newFileName('png', new Date(Date.now() + 3600_000));
  await files.put(fromMemory, Buffer.from('png bytes'), 'png');
  assert.is((await files.read(fromMemory)).toString(), 'png bytes');
});

store("a customer's bucket takes a file the same way: streamed, whole, memory bounded", async () => {
  const sealer = new Sealer(randomBytes(32).toString('base64url'));
  const target: StoreTarget = {
    endpoint: s3.endpoint,
    bucket: BUCKET,
    region: 'us-east-1',
    access_key_id: 'S3RVER',
    secret_access_key: sealer.seal('S3RVER'),
    key: 'customer/recording.mov',
    acl: '',
    storage_class: 'standard',
    return_location: false,
  };
  const growth = await peakGrowth(() =>
    uploadOutput(target, big, 'mov', { sealer, allowPrivate: true, until: Date.now() + 30_000 }),
  );
  assert.ok(
    growth < boundFor(big.size),
    `buffers grew by ${(growth / 2 ** 20).toFixed(1)} MiB for a ${big.size >> 20} MiB file`,
  );
  assert.ok((await readObject(clientOf(s3), BUCKET, 'customer/recording.mov')).equals(await readFile(big.path)));
});

function clientOf(server: S3Server): S3Client {
  return new S3Client({
    endPoint: '127.0.0.1',
    port: server.port,
    useSSL: false,
    accessKey: server.accessKey,
    secretKey: server.secretKey,
    region: 'us-east-1',
    pathStyle: true,
  });
}

store.run();
