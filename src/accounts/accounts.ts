// Dashboard accounts in the `accounts` KV bucket, keyed by normalized email; each names its workspaces.
import { randomBytes } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { createJson, readJson, updateJson } from '../jetstream/kv-json.ts';
import { normalizeEmail } from '../workspaces/workspace.ts';

/** One person who can sign in to the dashboard. */
export interface Account {
  email: string;
  /** scrypt hash; null for someone invited who has not chosen a password yet. */
  password_hash: string | null;
  verified: boolean;
  /** The workspaces this account opens: its own, and invitations it claimed (docs/security.md). */
  workspace_ids: string[];
  /**
   * Workspaces the address was invited to (a member's invitation, the CLI's `--owner` or `member
   * add`) and has not claimed yet: claimed only through the link mailed to the address, or the
   * operator's `member verify`, never by whoever holds the account's password.
   */
  invited_ids?: string[];
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

/** Reads and changes accounts with compare-and-set; membership (src/accounts/membership.ts) keeps workspaces in step. */
export class AccountStore {
  constructor(private readonly bucket: KV) {}

  /** An account by email, or null. */
  async get(email: string): Promise<Account | null> {
    return (await readJson<Account>(this.bucket, keyOf(email))).value;
  }

  /** Changes an account (creating it from `fresh` when absent); `change` returns undefined to leave it. */
  async update(email: string, change: (current: Account) => Account | undefined): Promise<Account> {
    const address = normalizeEmail(email);
    const now = new Date().toISOString();
    const { value } = await updateJson<Account>(this.bucket, keyOf(address), (current) => {
      const base: Account = current ?? {
        email: address,
        password_hash: null,
        verified: false,
        workspace_ids: [],
        token_nonce: nonce(),
        created_at: now,
        updated_at: now,
      };
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
      email: address,
      password_hash: passwordHash,
      verified: false,
      workspace_ids: [],
      token_nonce: nonce(),
      created_at: now,
      updated_at: now,
    });
  }

  /** Records that the account belongs to a workspace (its invitation there, if any, claimed). */
  async join(email: string, workspaceId: string): Promise<Account> {
    return this.update(email, (current) =>
      current.workspace_ids.includes(workspaceId) && !current.invited_ids?.includes(workspaceId)
        ? current
        : {
            ...current,
            workspace_ids: [...current.workspace_ids.filter((id) => id !== workspaceId), workspaceId],
            invited_ids: (current.invited_ids ?? []).filter((id) => id !== workspaceId),
          },
    );
  }

  /** Records an invitation to a workspace, to be claimed through the mailed link; nothing if it belongs already. */
  async invite(email: string, workspaceId: string): Promise<Account> {
    return this.update(email, (current) =>
      current.workspace_ids.includes(workspaceId) || current.invited_ids?.includes(workspaceId)
        ? current
        : { ...current, invited_ids: [...(current.invited_ids ?? []), workspaceId] },
    );
  }

  /** Records that the account left a workspace (or its invitation there was taken back). */
  async leave(email: string, workspaceId: string): Promise<Account> {
    return this.update(email, (current) => ({
      ...current,
      workspace_ids: current.workspace_ids.filter((id) => id !== workspaceId),
      invited_ids: (current.invited_ids ?? []).filter((id) => id !== workspaceId),
    }));
  }

  /** Sets a new password (the mailed links' nonce is spent with it). */
  async setPassword(email: string, passwordHash: string): Promise<Account> {
    return this.update(email, (current) => ({ ...current, password_hash: passwordHash, token_nonce: nonce() }));
  }
}
