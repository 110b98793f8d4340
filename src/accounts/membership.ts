// Who belongs to which workspace, changed in one place for the CLI and the dashboard alike.
import { ServiceError } from '../errors.ts';
import {
  canManage,
  normalizeEmail,
  type Member,
  type Plan,
  type Role,
  type Workspace,
  type WorkspaceStore,
} from '../workspaces/workspace.ts';
import type { Account, AccountStore } from './accounts.ts';

/** Who asks for a change: an operator at the CLI (no rules), or a member in the dashboard (roles apply). */
export type Actor = { operator: true } | { email: string };

const isOperator = (actor: Actor): actor is { operator: true } => 'operator' in actor;

/** Refuses unless the actor is an owner of the workspace as it is now. */
function requireOwner(workspace: Workspace, actor: Actor): void {
  if (!isOperator(actor) && workspace.members.find((m) => m.email === normalizeEmail(actor.email))?.role !== 'owner') {
    throw new ServiceError(
      'forbidden',
      {},
      { message: 'Only owners of the workspace can change roles and remove members.' },
    );
  }
}

/** Refuses a change that would leave the workspace without an owner. */
function keepAnOwner(workspace: Workspace): Workspace {
  if (!workspace.members.some((m) => m.role === 'owner')) {
    throw new ServiceError(
      'forbidden',
      {},
      { message: 'A workspace must keep at least one owner: make someone else an owner first.' },
    );
  }
  return workspace;
}

/**
 * The one truth of membership: a workspace's `members` say who belongs (and, for the email rule,
 * who is verified), every member has an account (an invitation until a password is chosen), and
 * the account lists its workspaces. An address is verified once, on its account; every membership
 * of it follows.
 */
export class Membership {
  constructor(
    readonly accounts: AccountStore,
    readonly workspaces: WorkspaceStore,
  ) {}

  /**
   * Signs an address up: a new account with a password and a new free workspace it owns. An
   * address that has an account already is `taken`; one that was only invited (added to a
   * workspace, by the CLI or a member, with no password yet) is `invited`: the caller mails it the
   * invitation link, where the mailbox's owner chooses the password, since a sign-up form proves
   * nothing about the mailbox and the invited workspaces must not go to whoever typed the address.
   */
  async signUp(
    email: string,
    passwordHash: string,
  ): Promise<
    | { outcome: 'created'; account: Account; workspace: Workspace }
    | { outcome: 'taken' }
    | { outcome: 'invited'; account: Account }
  > {
    const created = await this.accounts.create(email, passwordHash);
    if (!created) {
      const existing = await this.accounts.get(email);
      return existing && existing.password_hash === null
        ? { outcome: 'invited', account: existing }
        : { outcome: 'taken' };
    }
    const workspace = await this.createWorkspace({ plan: 'free', owner: email });
    return { outcome: 'created', account: (await this.accounts.get(email))!, workspace };
  }

  /**
   * Creates a workspace, its owner a member with an account (an invitation if the address has none).
   * The owner starts unverified in it (docs/operations.md), whatever the address proved elsewhere.
   */
  async createWorkspace(input: { plan: Plan; quota?: number; owner?: string }): Promise<Workspace> {
    const workspace = await this.workspaces.create(input);
    if (input.owner) await this.accounts.join(input.owner, workspace.workspace_id);
    return workspace;
  }

  /**
   * Adds a member (or changes the role of one already there). An owner or admin may add; only an
   * owner may add an owner. The address gets an account if it had none, so it sees the workspace
   * once it signs in; `account.password_hash === null` says it has yet to choose a password.
   */
  async add(
    workspaceId: string,
    email: string,
    role: Role,
    actor: Actor,
  ): Promise<{ workspace: Workspace; member: Member; account: Account; added: boolean }> {
    const address = normalizeEmail(email);
    const allowed = (workspace: Workspace) => {
      if (isOperator(actor)) return;
      if (!canManage(workspace, actor.email)) throw new ServiceError('forbidden');
      if (
        role === 'owner' &&
        workspace.members.find((m) => m.email === normalizeEmail(actor.email))?.role !== 'owner'
      ) {
        throw new ServiceError('forbidden', {}, { message: 'Only owners can invite owners.' });
      }
    };
    allowed(await this.workspaces.require(workspaceId));
    // The account first, so the member's `verified` starts in step with it.
    const account = await this.accounts.join(address, workspaceId);
    let added = false;
    const workspace = await this.workspaces.update(workspaceId, (current) => {
      allowed(current);
      const existing = current.members.find((m) => m.email === address);
      added = !existing;
      if (existing && !isOperator(actor)) return current;
      const members = existing
        ? current.members.map((m) =>
            m.email === address ? { ...m, role, verified: account.verified || m.verified } : m,
          )
        : [...current.members, { email: address, role, verified: account.verified }];
      return { ...current, members };
    });
    return { workspace, member: workspace.members.find((m) => m.email === address)!, account, added };
  }

  /** Changes a member's role (owners only; the last owner stays). */
  async setRole(workspaceId: string, email: string, role: Role, actor: Actor): Promise<Workspace> {
    const address = normalizeEmail(email);
    return this.workspaces.update(workspaceId, (current) => {
      requireOwner(current, actor);
      if (!current.members.some((m) => m.email === address)) throw notMember(address, workspaceId);
      return keepAnOwner({
        ...current,
        members: current.members.map((m) => (m.email === address ? { ...m, role } : m)),
      });
    });
  }

  /** Removes a member (owners only; the last owner stays); the account no longer lists the workspace. */
  async remove(workspaceId: string, email: string, actor: Actor): Promise<Workspace> {
    const address = normalizeEmail(email);
    const workspace = await this.workspaces.update(workspaceId, (current) => {
      requireOwner(current, actor);
      if (!current.members.some((m) => m.email === address)) throw notMember(address, workspaceId);
      return keepAnOwner({ ...current, members: current.members.filter((m) => m.email !== address) });
    });
    await this.accounts.leave(address, workspaceId);
    return workspace;
  }

  /** An operator's word that a member's address is verified, in that workspace (`shutterbus member verify`). */
  async verifyMember(workspaceId: string, email: string): Promise<Member> {
    const address = normalizeEmail(email);
    const workspace = await this.workspaces.update(workspaceId, (current) => {
      if (!current.members.some((m) => m.email === address)) throw notMember(address, workspaceId);
      return { ...current, members: current.members.map((m) => (m.email === address ? { ...m, verified: true } : m)) };
    });
    return workspace.members.find((m) => m.email === address)!;
  }

  /** The mailbox proved (its link was followed): the account is verified, and its membership in every workspace. */
  async verify(email: string): Promise<Account> {
    const account = await this.accounts.update(email, (current) =>
      current.verified ? current : { ...current, verified: true },
    );
    for (const workspaceId of account.workspace_ids) {
      const workspace = await this.workspaces.get(workspaceId);
      if (!workspace?.members.some((m) => m.email === account.email && !m.verified)) continue;
      await this.workspaces.update(workspaceId, (current) => ({
        ...current,
        members: current.members.map((m) => (m.email === account.email ? { ...m, verified: true } : m)),
      }));
    }
    return account;
  }
}

function notMember(address: string, workspaceId: string): ServiceError {
  return new ServiceError('not_found', {}, { message: `${address} is not a member of ${workspaceId}.` });
}
