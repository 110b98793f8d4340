// Dashboard accounts in the `accounts` KV bucket, keyed by normalized email; each names its workspaces.
import { randomBytes } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { createJson, readJson, updateJson } from '../jetstream/kv-json.ts';
import { normalizeEmail, type WorkspaceStore } from '../workspaces/workspace.ts';

/** One person who can sign in to the dashboard. */
export interface Account {
  email: string;
  /** scrypt hash; null for someone invited who has not chosen a password yet. */
  password_hash: string | null;
  verified: boolean;
  workspace_ids: string[];
  /** Changes whenever a password is set, so an invitation link works once. */
  token_nonce: string;
  created_at: string;
  updated_at: string;
}

/** A plausible email address (the dashboard's and the CLI's rule). */
export const emailPattern = /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{1,63}$/;

// KV keys allow [-/_=.A-Za-z0-9] only; base64url of the normalized email fits and is reversible.
const keyOf = (email: string) => `e_${Buffer.from(normalizeEmail(email)).toString('base64url')}`;
const nonce = () => randomBytes(12).toString('base64url');

/** Reads and changes accounts with compare-and-set; keeps workspace members' `verified` in step. */
export class AccountStore {
  constructor(
    private readonly bucket: KV,
    private readonly workspaces: WorkspaceStore,
  ) {}

  /** An account by email, or null. */
  async get(email: string): Promise<Account | null> {
    return (await readJson<Account>(this.bucket, keyOf(email))).value;
  }

  /** Changes an account (creating it from `fresh` when absent); `change` returns undefined to leave it. */
  async update(email: string, change: (current: Account) => Account | undefined): Promise<Account> {
    const address = normalizeEmail(email);
    const now = new Date().toISOString();
    const { value } = await updateJson<Account>(this.bucket, keyOf(address), (current) => {
      const base: Account = current ?? { email: address, password_hash: null, verified: false, workspace_ids: [], token_nonce: nonce(), created_at: now, updated_at: now };
      const next = change(base);
      if (next === undefined) return current === null ? base : undefined;
      return { ...next, updated_at: now };
    });
    return value!;
  }

  /** Creates an account with a password; false when the address has one (or an invitation) already. */
  async create(email: string, passwordHash: string): Promise<boolean> {
    const address = normalizeEmail(email);
    const now = new Date().toISOString();
    return createJson<Account>(this.bucket, keyOf(address), {
      email: address, password_hash: passwordHash, verified: false, workspace_ids: [], token_nonce: nonce(), created_at: now, updated_at: now,
    });
  }

  /**
   * Creates an account with a password and a new free workspace it owns; null when the email is
   * taken. An invited address counts as taken: its invitation link is how it chooses a password,
   * since signing up proves nothing about the mailbox and would hand over the invited workspaces.
   */
  async signUp(email: string, passwordHash: string): Promise<Account | null> {
    const address = normalizeEmail(email);
    const now = new Date().toISOString();
    const created = await createJson<Account>(this.bucket, keyOf(address), {
      email: address, password_hash: passwordHash, verified: false, workspace_ids: [], token_nonce: nonce(), created_at: now, updated_at: now,
    });
    if (!created) return null;
    const workspace = await this.workspaces.create({ plan: 'free', owner: address });
    return this.join(address, workspace.workspace_id);
  }

  /** Records that the account belongs to a workspace. */
  async join(email: string, workspaceId: string): Promise<Account> {
    return this.update(email, (current) =>
      current.workspace_ids.includes(workspaceId) ? current : { ...current, workspace_ids: [...current.workspace_ids, workspaceId] },
    );
  }

  /** Records that the account left a workspace. */
  async leave(email: string, workspaceId: string): Promise<Account> {
    return this.update(email, (current) => ({ ...current, workspace_ids: current.workspace_ids.filter((id) => id !== workspaceId) }));
  }

  /** Sets a new password (the invitation link's nonce is spent with it). */
  async setPassword(email: string, passwordHash: string): Promise<Account> {
    return this.update(email, (current) => ({ ...current, password_hash: passwordHash, token_nonce: nonce() }));
  }

  /** Marks the account verified, and the member verified in every workspace it belongs to. */
  async verify(email: string): Promise<Account> {
    const account = await this.update(email, (current) => (current.verified ? current : { ...current, verified: true }));
    await this.syncMemberships(account);
    return account;
  }

  /** Brings each workspace's members[].verified in line with the account (the email rule reads it there). */
  async syncMemberships(account: Account): Promise<void> {
    for (const workspaceId of account.workspace_ids) {
      const workspace = await this.workspaces.get(workspaceId);
      const member = workspace?.members.find((m) => m.email === account.email);
      if (!member || member.verified === account.verified) continue;
      await this.workspaces.update(workspaceId, (current) => ({
        ...current,
        members: current.members.map((m) => (m.email === account.email ? { ...m, verified: account.verified } : m)),
      }));
    }
  }
}
