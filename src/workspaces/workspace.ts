// Workspaces, their members and keys, in JetStream KV: the only database Shutterbus has.
import { randomBytes } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { ServiceError } from '../errors.ts';
import { createJson, readJson, updateJson } from '../jetstream/kv-json.ts';
import { Sealer } from '../secrets/sealer.ts';
import type { DefaultStorage } from '../domain/storage.ts';

/** Roles a member can have; owners and admins manage settings and keys. */
export type Role = 'owner' | 'admin' | 'member';

/** Plans and their monthly screenshot quota. */
export const planQuotas = { free: 100, pro: 10_000 } as const;
export type Plan = keyof typeof planQuotas;

/** Renders a workspace may have in flight at once, by plan. */
export const planConcurrency: Record<Plan, number> = { free: 5, pro: 20 };

/** One member of a workspace. */
export interface Member {
  email: string;
  role: Role;
  verified: boolean;
}

/** A workspace as stored. */
export interface Workspace {
  workspace_id: string;
  plan: Plan;
  quota: number;
  access_key: string;
  secret_key: string;
  require_signed_requests: boolean;
  members: Member[];
  /** Where store=true uploads when a request names no bucket of its own (docs/storage.md); its secret sealed. */
  storage?: DefaultStorage;
  created_at: string;
  updated_at: string;
}

/** The public view of a workspace (docs/operations.md): what the CLI prints. */
export function describeWorkspace(workspace: Workspace) {
  const { workspace_id, plan, quota, access_key, secret_key, require_signed_requests, members } = workspace;
  return { workspace_id, plan, quota, access_key, secret_key, require_signed_requests, members };
}

/** True when some member has verified an email address, or the plan does not require it. */
export function keysUsable(workspace: Workspace): boolean {
  return workspace.plan !== 'free' || workspace.members.some((member) => member.verified);
}

/** True when `email` is an owner or admin of the workspace. */
export function canManage(workspace: Workspace, email: string): boolean {
  const member = workspace.members.find((m) => m.email === normalizeEmail(email));
  return member?.role === 'owner' || member?.role === 'admin';
}

/** Emails compare case-insensitively. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

// 24 random bytes after the prefix, as the issue demands; base64url keeps keys URL- and KV-safe.
const newKey = (prefix: 'ak_' | 'sk_') => prefix + randomBytes(24).toString('base64url');

/**
 * Reads and changes workspaces; the `access_keys` bucket maps each live access key to its workspace.
 * The secret key is sealed in KV (docs/security.md) and open only in this process's memory.
 */
export class WorkspaceStore {
  constructor(
    private readonly workspaces: KV,
    private readonly accessKeys: KV,
    private readonly sealer: Sealer,
  ) {}

  private sealed(workspace: Workspace): Workspace {
    return { ...workspace, secret_key: this.sealer.seal(workspace.secret_key) };
  }

  private opened(stored: Workspace | null): Workspace | null {
    // A record written before secrets were sealed holds its key in plain text until `secrets reseal`.
    if (!stored || !Sealer.isSealed(stored.secret_key)) return stored;
    return { ...stored, secret_key: this.sealer.open(stored.secret_key) };
  }

  /** Creates a workspace with a fresh key pair. */
  async create(input: { plan: Plan; quota?: number; owner?: string }): Promise<Workspace> {
    const now = new Date().toISOString();
    const workspace: Workspace = {
      workspace_id: `ws_${randomBytes(8).toString('hex')}`,
      plan: input.plan,
      quota: input.quota ?? planQuotas[input.plan],
      access_key: newKey('ak_'),
      secret_key: newKey('sk_'),
      require_signed_requests: false,
      // A new owner starts unverified (docs/operations.md).
      members: input.owner ? [{ email: normalizeEmail(input.owner), role: 'owner', verified: false }] : [],
      created_at: now,
      updated_at: now,
    };
    await createJson(this.accessKeys, workspace.access_key, workspace.workspace_id);
    if (!(await createJson(this.workspaces, workspace.workspace_id, this.sealed(workspace))))
      throw new Error('workspace id collision');
    return workspace;
  }

  /** A workspace by id, or null. */
  async get(workspaceId: string): Promise<Workspace | null> {
    if (!/^ws_[0-9a-f]{16}$/.test(workspaceId)) return null;
    return this.opened((await readJson<Workspace>(this.workspaces, workspaceId)).value);
  }

  /** The workspace `workspaceId`; a not_found error when there is none. */
  async require(workspaceId: string): Promise<Workspace> {
    const workspace = await this.get(workspaceId);
    if (!workspace) throw noWorkspace(workspaceId);
    return workspace;
  }

  /** The workspace an access key belongs to, or null; a rotated-away key finds nothing. */
  async workspaceIdOf(accessKey: string): Promise<string | null> {
    if (!/^ak_[A-Za-z0-9_-]{16,64}$/.test(accessKey)) return null;
    return (await readJson<string>(this.accessKeys, accessKey)).value;
  }

  /** Changes a workspace with compare-and-set; `change` may throw a ServiceError to refuse. */
  async update(workspaceId: string, change: (workspace: Workspace) => Workspace): Promise<Workspace> {
    let changed: Workspace | undefined;
    await updateJson<Workspace>(this.workspaces, workspaceId, (stored) => {
      const current = this.opened(stored);
      if (!current) throw noWorkspace(workspaceId);
      changed = { ...change(current), updated_at: new Date().toISOString() };
      return this.sealed(changed);
    });
    return changed!;
  }

  /**
   * Seals again, under the current SECRETS_KEY, every secret of every workspace that is in plain
   * text or sealed under a previous key (a rotation: docs/security.md); returns how many changed.
   */
  async reseal(): Promise<number> {
    let count = 0;
    for await (const workspaceId of await this.workspaces.keys()) {
      const { changed } = await updateJson<Workspace>(this.workspaces, workspaceId, (stored) => {
        if (!stored) return undefined;
        const resealed = resealStrings(stored, this.sealer) as Workspace;
        if (!Sealer.isSealed(resealed.secret_key)) resealed.secret_key = this.sealer.seal(resealed.secret_key);
        return JSON.stringify(resealed) === JSON.stringify(stored) ? undefined : resealed;
      });
      if (changed) count++;
    }
    return count;
  }

  /** Replaces both keys; the old access key stops resolving at once. */
  async rotateKeys(workspaceId: string, asEmail: string): Promise<Workspace> {
    const accessKey = newKey('ak_');
    let previous = '';
    await createJson(this.accessKeys, accessKey, workspaceId);
    const workspace = await this.update(workspaceId, (current) => {
      if (!canManage(current, asEmail)) throw new ServiceError('forbidden');
      previous = current.access_key;
      return { ...current, access_key: accessKey, secret_key: newKey('sk_') };
    }).catch(async (err) => {
      await this.accessKeys.delete(accessKey);
      throw err;
    });
    await this.accessKeys.delete(previous);
    return workspace;
  }
}

/** A copy of `value` in which every sealed string under a previous key is sealed under the current one. */
function resealStrings(value: unknown, sealer: Sealer): unknown {
  if (Sealer.isSealed(value)) return sealer.isStale(value) ? sealer.seal(sealer.open(value)) : value;
  if (Array.isArray(value)) return value.map((item) => resealStrings(item, sealer));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resealStrings(item, sealer)]));
  }
  return value;
}

const noWorkspace = (workspaceId: string) =>
  new ServiceError('not_found', {}, { message: `No workspace ${workspaceId}.` });
