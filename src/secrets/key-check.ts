// One key for every process: a process whose sealing key cannot open what is sealed in NATS
// refuses to start, in one line naming SECRETS_KEY and the key id it lacks, instead of answering
// every request that meets a sealed record with a 500 (docs/security.md, "One key").
//
// What is checked is a witness: one value sealed by the first process that found none, in the
// dashboard bucket, re-sealed by `shutterbus secrets reseal` like every other secret. Before it
// writes the witness, that first process reads the secrets sealed already (workspaces, the session
// secret, monitors): a deployment older than the witness is checked against its real records once.
import type { KV } from '@nats-io/kv';
import { ConfigError } from '../config.ts';
import { createJson, readJson, updateJson } from '../jetstream/kv-json.ts';
import { names, type Topology } from '../jetstream/topology.ts';
import { SealError, Sealer } from './sealer.ts';

/** The witness's key in the dashboard bucket. */
export const WITNESS_KEY = 'sealing_key_witness';
const WITNESS_TEXT = 'shutterbus sealing key witness';

/** The buckets whose records hold sealed values, and the dashboard bucket the witness lives in. */
type SealedBuckets = Pick<Topology, 'jsm' | 'dashboard' | 'workspaces' | 'monitors'>;

/**
 * Checks that `sealer` opens the secrets sealed in NATS; throws a ConfigError naming SECRETS_KEY
 * and the key id this process lacks. `source` says where this process's key came from.
 */
export async function checkSealingKey(buckets: SealedBuckets, sealer: Sealer, source: string): Promise<void> {
  let { value } = await readJson<string>(buckets.dashboard, WITNESS_KEY);
  if (value === null) {
    for (const keyId of await sealedKeyIds(buckets)) refuseUnless(sealer, keyId, source);
    // The first writer's witness stands; a process racing this one checks against it below.
    await createJson(buckets.dashboard, WITNESS_KEY, sealer.seal(WITNESS_TEXT));
    value = (await readJson<string>(buckets.dashboard, WITNESS_KEY)).value;
  }
  if (!Sealer.isSealed(value)) return;
  refuseUnless(sealer, Sealer.keyIdOf(value), source);
  try {
    sealer.open(value);
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
    throw new ConfigError(`SECRETS_KEY: the sealing key witness in NATS does not open (${err.message})`);
  }
}

function refuseUnless(sealer: Sealer, keyId: string, source: string): void {
  if (sealer.holds(keyId)) return;
  throw new ConfigError(
    `SECRETS_KEY: the secrets in NATS are sealed with key ${keyId}, which this process lacks ` +
      `(it has key ${sealer.keyId}, from ${source}); give every process the same SECRETS_KEY`,
  );
}

/** Seals the witness again under the current key when it was sealed under a previous one; true when it changed. */
export async function resealWitness(dashboard: KV, sealer: Sealer): Promise<boolean> {
  const { changed } = await updateJson<string>(dashboard, WITNESS_KEY, (stored) =>
    Sealer.isSealed(stored) && sealer.isStale(stored) ? sealer.seal(sealer.open(stored)) : undefined,
  );
  return changed;
}

/** The ids of every key a secret stored in the buckets was sealed with. */
async function sealedKeyIds(buckets: SealedBuckets): Promise<Set<string>> {
  const ids = new Set<string>();
  const named = [
    [names.dashboardBucket, buckets.dashboard],
    [names.workspacesBucket, buckets.workspaces],
    [names.monitorsBucket, buckets.monitors],
  ] as const;
  for (const [name, bucket] of named) {
    // An empty bucket (a new deployment's) is not listed: listing opens a consumer on its stream.
    if ((await buckets.jsm.streams.info(`KV_${name}`)).state.messages === 0) continue;
    for await (const key of await bucket.keys()) {
      collectKeyIds((await readJson<unknown>(bucket, key)).value, ids);
    }
  }
  return ids;
}

function collectKeyIds(value: unknown, ids: Set<string>): void {
  if (Sealer.isSealed(value)) ids.add(Sealer.keyIdOf(value));
  else if (Array.isArray(value)) for (const item of value) collectKeyIds(item, ids);
  else if (value && typeof value === 'object') for (const item of Object.values(value)) collectKeyIds(item, ids);
}
