// The file sweeper against the real local S3 store: files whose expiry day has passed go, the
// rest stay, and a store that does not answer is logged and tried again, never thrown.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { newFileName } from '../../src/domain/files.ts';
import { pino } from 'pino';
import { FileStore } from '../../src/storage/store.ts';
import { startFileSweeper } from '../../src/storage/sweeper.ts';
import { startS3, type S3Server } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait.ts';

const sweeper = suite<{ s3: S3Server; store: FileStore }>('file sweeper');
const day = 24 * 3600 * 1000;

sweeper.before(async (context) => {
  context.s3 = await startS3();
  context.store = new FileStore({
    endPoint: context.s3.endpoint,
    accessKey: 'S3RVER',
    secretKey: 'S3RVER',
    bucket: 'sweeper-test',
    region: 'us-east-1',
  });
  await context.store.ensureBucket();
});
sweeper.after(async ({ s3 }) => {
  await s3?.stop();
});

sweeper("sweep removes the files of past expiry days and keeps today's and later ones", async ({ store }) => {
  const now = new Date();
  const expired = [
    newFileName('png', new Date(now.getTime() - 2 * day)),
    newFileName('pdf', new Date(now.getTime() - day)),
  ];
  const kept = [newFileName('png', now), newFileName('webp', new Date(now.getTime() + 30 * day))];
  for (const name of [...expired, ...kept])
    await store.put(name, Buffer.from(name), name.endsWith('pdf') ? 'pdf' : 'png');

  assert.is(await store.sweep(now), 2);
  for (const name of expired) assert.is(await store.stat(name), null, `${name} swept`);
  for (const name of kept) assert.ok(await store.stat(name), `${name} kept`);
  assert.is(await store.sweep(now), 0, 'a second sweep finds nothing more');
});

sweeper(
  'the periodic sweeper sweeps at once, and a store that does not answer is logged, not thrown',
  async ({ s3, store }) => {
    const expired = newFileName('png', new Date(Date.now() - 3 * day));
    await store.put(expired, Buffer.from('old'), 'png');
    const stop = startFileSweeper(store, pino({ level: 'silent' }));
    try {
      await waitFor(async () => (await store.stat(expired)) === null, 'the first sweep');
    } finally {
      stop();
    }

    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    const unreachable = new FileStore({
      endPoint: `http://127.0.0.1:${s3.port + 1}`,
      accessKey: 'x',
      secretKey: 'x',
      bucket: 'none',
      region: 'us-east-1',
    });
    const stopUnreachable = startFileSweeper(unreachable, log);
    try {
      await waitFor(() => lines.some((line) => line.includes('file sweep failed')), 'the warning');
    } finally {
      stopUnreachable();
    }
  },
);

sweeper.run();
