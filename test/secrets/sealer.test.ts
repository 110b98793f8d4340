import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError } from '../../src/config.ts';
import { createSealer, generatedKeyPath } from '../../src/secrets/key.ts';
import { SealError, Sealer } from '../../src/secrets/sealer.ts';

const keyA = 'a'.repeat(32);
const keyB = 'b'.repeat(32);

test('a sealed secret opens to itself and does not contain it', () => {
  const sealer = new Sealer(keyA);
  const sealed = sealer.seal('sk_live_secret');
  assert.ok(Sealer.isSealed(sealed));
  assert.not.ok(sealed.includes('sk_live_secret'));
  assert.not.equal(sealer.seal('sk_live_secret'), sealed, 'a fresh iv each time');
  assert.is(sealer.open(sealed), 'sk_live_secret');
});

test('a tampered value or another key is refused', () => {
  const sealed = new Sealer(keyA).seal('x');
  // The last character carries padding bits; the one before it is all ciphertext tag.
  const tampered = sealed.at(-2) === 'A' ? 'B' : 'A';
  const flipped = sealed.slice(0, -2) + tampered + sealed.slice(-1);
  assert.throws(
    () => new Sealer(keyA).open(flipped),
    (err: unknown) => err instanceof SealError,
  );
  assert.throws(
    () => new Sealer(keyB).open(sealed),
    (err: unknown) => err instanceof SealError,
  );
  assert.throws(
    () => new Sealer(keyA).open('plain'),
    (err: unknown) => err instanceof SealError,
  );
});

test('rotation: the previous key still opens, only the current one seals', () => {
  const old = new Sealer(keyA).seal('x');
  const rotated = new Sealer(keyB, [keyA]);
  assert.is(rotated.open(old), 'x');
  assert.ok(rotated.isStale(old));
  assert.not.ok(rotated.isStale(rotated.seal('x')));
});

test('a development machine generates its key once, 0600, in DATA_DIR; production requires one', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sealer-'));
  try {
    const config = { dataDir, production: false, secretsKeyPrevious: [] };
    const sealed = createSealer(config).seal('x');
    assert.is(createSealer(config).open(sealed), 'x');
    assert.is(statSync(generatedKeyPath(dataDir)).mode & 0o777, 0o600);
    assert.ok(readFileSync(generatedKeyPath(dataDir), 'utf8').trim().length >= 32);
    assert.throws(
      () => createSealer({ ...config, production: true }),
      (err: unknown) => err instanceof ConfigError,
    );
    assert.is(createSealer({ ...config, production: true, secretsKey: keyA }).open(new Sealer(keyA).seal('y')), 'y');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a DATA_DIR that cannot keep the generated key stops the start with one line naming it', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sealer-'));
  try {
    const file = path.join(dir, 'not-a-directory');
    writeFileSync(file, '');
    assert.throws(
      () => createSealer({ dataDir: file, production: false, secretsKeyPrevious: [] }),
      (err: unknown) =>
        err instanceof ConfigError &&
        /^DATA_DIR: cannot keep the generated secrets key in .*not-a-directory \(ENOTDIR\)/.test(err.message) &&
        !err.message.includes('\n'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
