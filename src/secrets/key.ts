// Where the sealing key comes from: SECRETS_KEY, or on a development machine a key generated once
// and kept in DATA_DIR (mode 0600). Production (NODE_ENV=production) refuses to start without it.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, type Config } from '../config.ts';
import { Sealer } from './sealer.ts';

/** The file a development machine's generated key lives in. */
export function generatedKeyPath(dataDir: string): string {
  return path.join(dataDir, 'secrets.key');
}

function generatedKey(dataDir: string): string {
  const file = generatedKeyPath(dataDir);
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64url');
  try {
    // 'wx': two processes starting at once on one DATA_DIR keep whichever key was written first.
    writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return readFileSync(file, 'utf8').trim();
  }
  chmodSync(file, 0o600);
  return key;
}

/** Where the process's key comes from, as the start and the CLI say it. */
export function sealingKeySource(config: Pick<Config, 'secretsKey' | 'dataDir'>): string {
  return config.secretsKey ? 'SECRETS_KEY' : `the development key in ${generatedKeyPath(config.dataDir)}`;
}

/** The process's sealer: from SECRETS_KEY (+ SECRETS_KEY_PREVIOUS), else the generated development key. */
export function createSealer(
  config: Pick<Config, 'secretsKey' | 'secretsKeyPrevious' | 'production' | 'dataDir'>,
): Sealer {
  if (config.secretsKey) return new Sealer(config.secretsKey, config.secretsKeyPrevious);
  if (config.production)
    throw new ConfigError(
      'SECRETS_KEY: required in production (NODE_ENV=production); use at least 32 random characters',
    );
  let key: string;
  try {
    key = generatedKey(config.dataDir);
  } catch (err) {
    // A DATA_DIR that is a file, or not writable: the operator's to fix, said in one line.
    throw new ConfigError(
      `DATA_DIR: cannot keep the generated secrets key in ${config.dataDir} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); make it a writable directory or set SECRETS_KEY`,
    );
  }
  return new Sealer(key, config.secretsKeyPrevious);
}
