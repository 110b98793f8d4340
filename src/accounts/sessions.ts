// Dashboard sessions kept server-side in the `sessions` KV bucket, one key per session under its
// account, so that a sign-out ends one and a password change or "sign out everywhere" ends them all.
import type { KV } from '@nats-io/kv';
import { readJson } from '../jetstream/kv-json.ts';
import { normalizeEmail } from '../workspaces/workspace.ts';

/** What the server keeps of one signed-in session. */
export interface SessionRecord {
  email: string;
  created_at: string;
}

const encoder = new TextEncoder();
// KV keys allow [-/_=.A-Za-z0-9]: the account as base64url, then the session id (base64url too).
const accountPrefix = (email: string) => `a_${Buffer.from(normalizeEmail(email)).toString('base64url')}`;
const keyOf = (email: string, sid: string) => `${accountPrefix(email)}.${sid}`;
const sidPattern = /^[A-Za-z0-9_-]{16,64}$/;

/** The signed-in sessions of every account; a cookie is worth nothing once its entry is gone. */
export class SessionStore {
  constructor(private readonly bucket: KV) {}

  /** Records a new signed-in session of `email`. */
  async open(email: string, sid: string): Promise<void> {
    const record: SessionRecord = { email: normalizeEmail(email), created_at: new Date().toISOString() };
    await this.bucket.put(keyOf(email, sid), encoder.encode(JSON.stringify(record)));
  }

  /** True while the session `sid` of `email` has not been ended. */
  async isOpen(email: string, sid: string): Promise<boolean> {
    if (!sidPattern.test(sid)) return false;
    return (await readJson<SessionRecord>(this.bucket, keyOf(email, sid))).value !== null;
  }

  /** Ends one session (sign-out). */
  async end(email: string, sid: string): Promise<void> {
    if (sidPattern.test(sid)) await this.bucket.purge(keyOf(email, sid));
  }

  /** Ends every session of `email` but `keep` (a password change keeps the browser that made it); returns how many. */
  async endAll(email: string, keep?: string): Promise<number> {
    const prefix = accountPrefix(email);
    const keys: string[] = [];
    for await (const key of await this.bucket.keys(`${prefix}.*`)) keys.push(key);
    const ended = keys.filter((key) => key !== (keep === undefined ? undefined : `${prefix}.${keep}`));
    await Promise.all(ended.map((key) => this.bucket.purge(key)));
    return ended.length;
  }
}
