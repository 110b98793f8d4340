// The process logger: a customer's secret is censored wherever a logged object carries it.
import { Writable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../src/log.ts';

const logs = suite('logger');

logs('fields holding a storage secret are censored, at the top and one level down', () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const log = createLogger({ logLevel: 'info' }, false, sink as unknown as Parameters<typeof createLogger>[2]);
  log.info(
    {
      storage_secret_access_key: 'top-secret-1',
      store: { secret_access_key: 'top-secret-2', bucket: 'shots' },
      s3: { secretKey: 'top-secret-3' },
    },
    'a line',
  );
  const text = lines.join('');
  for (const secret of ['top-secret-1', 'top-secret-2', 'top-secret-3']) assert.not.match(text, secret);
  const line = JSON.parse(lines[0]);
  assert.is(line.storage_secret_access_key, '[redacted]');
  assert.is(line.store.bucket, 'shots', 'the rest is logged as it is');
});

logs.run();
