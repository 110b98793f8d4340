// Profiles in the `profiles` KV bucket, keyed by workspace and name; each state sealed before it is
// written (src/secrets/), so the bucket's files never hold a cookie or a stored value in plain text.
import type { KV } from '@nats-io/kv';
import { deleteJson, readJson, updateJson } from '../jetstream/kv-json.ts';
import {
  PROFILE_NAME_PATTERN,
  originsOf,
  profileKey,
  type ProfileRecord,
  type StorageState,
} from '../domain/profile.ts';
import type { Sealer } from '../secrets/sealer.ts';

/** A workspace's profiles: written sealed, read back opened only for a render. */
export class ProfileStore {
  constructor(
    private readonly bucket: KV,
    private readonly sealer: Sealer,
  ) {}

  /** Stores `state` as the workspace's profile `name`, replacing one of that name; the record, state sealed. */
  async put(workspaceId: string, name: string, state: StorageState): Promise<ProfileRecord> {
    const record: ProfileRecord = {
      workspace_id: workspaceId,
      name,
      origins: originsOf(state),
      created_at: new Date().toISOString(),
      sealed_state: this.sealer.seal(JSON.stringify(state)),
    };
    await updateJson<ProfileRecord>(this.bucket, profileKey(workspaceId, name), () => record);
    return record;
  }

  /** The workspace's profile `name`, sealed, or null (another workspace's is not found either). */
  async get(workspaceId: string, name: string): Promise<ProfileRecord | null> {
    if (!PROFILE_NAME_PATTERN.test(name)) return null;
    return (await readJson<ProfileRecord>(this.bucket, profileKey(workspaceId, name))).value;
  }

  /** The state of the workspace's profile `name`, opened for a render; null when there is none. */
  async open(workspaceId: string, name: string): Promise<StorageState | null> {
    const record = await this.get(workspaceId, name);
    return record ? (JSON.parse(this.sealer.open(record.sealed_state)) as StorageState) : null;
  }

  /** The workspace's profiles, by name. */
  async list(workspaceId: string): Promise<ProfileRecord[]> {
    const profiles: ProfileRecord[] = [];
    for await (const key of await this.bucket.keys(`${workspaceId}.*`)) {
      const profile = (await readJson<ProfileRecord>(this.bucket, key)).value;
      if (profile) profiles.push(profile);
    }
    return profiles.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Seals every profile sealed under a previous key with the current one (after a SECRETS_KEY rotation); how many. */
  async reseal(): Promise<number> {
    let resealed = 0;
    for await (const key of await this.bucket.keys('>')) {
      const { changed } = await updateJson<ProfileRecord>(this.bucket, key, (current) =>
        current && this.sealer.isStale(current.sealed_state)
          ? { ...current, sealed_state: this.sealer.seal(this.sealer.open(current.sealed_state)) }
          : undefined,
      );
      if (changed) resealed++;
    }
    return resealed;
  }

  /** Deletes the workspace's profile `name`; true when this call deleted it. */
  async remove(workspaceId: string, name: string): Promise<boolean> {
    if (!PROFILE_NAME_PATTERN.test(name)) return false;
    return deleteJson<ProfileRecord>(this.bucket, profileKey(workspaceId, name), () => true);
  }
}
