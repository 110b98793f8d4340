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
    // The account's own workspace: it opens once the address is confirmed (requireSignIn).
    const workspace = await this.workspaces.create({ plan: 'free', owner: email });
    return { outcome: 'created', account: await this.accounts.join(email, workspace.workspace_id), workspace };
  }

  /**
   * Creates a workspace (the CLI's `workspace create`), its owner an invitation: the address is a
   * member, unverified (docs/operations.md), and the workspace opens to the account only once it
   * claims it through the mailed link or the operator's `member verify`. An account someone made
   * with the address beforehand does not get it by its password.
   */
  async createWorkspace(input: { plan: Plan; quota?: number; owner?: string }): Promise<Workspace> {
    const workspace = await this.workspaces.create(input);
    if (input.owner) await this.accounts.invite(input.owner, workspace.workspace_id);
    return workspace;
  }

  /**
   * Adds a member (or, for the operator, changes the role of one already there, keeping an owner).
   * An owner or admin may add; only an owner may add an owner. The address is invited: a member,
   * unverified, with an account (made if it had none) that opens the workspace only once it claims
   * the invitation (`claim`, through the mailed link; or the operator's `member verify`).
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
    let added = false;
    const workspace = await this.workspaces.update(workspaceId, (current) => {
      allowed(current);
      const existing = current.members.find((m) => m.email === address);
      added = !existing;
      if (existing && !isOperator(actor)) return current;
      // A new member is unverified until the invitation is claimed, whatever the account proved elsewhere.
      if (!existing) return { ...current, members: [...current.members, { email: address, role, verified: false }] };
      return keepAnOwner({
        ...current,
        members: current.members.map((m) => (m.email === address ? { ...m, role } : m)),
      });
    });
    const account = added
      ? await this.accounts.invite(address, workspaceId)
      : await this.accounts.update(address, () => undefined);
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

  /**
   * An operator's word that a member's address is verified, in that workspace (`shutterbus member
   * verify`): its invitation there is claimed. The account still opens it only once the address is
   * confirmed (requireSignIn), so a password someone chose for the address before proves nothing.
   */
  async verifyMember(workspaceId: string, email: string): Promise<Member> {
    const address = normalizeEmail(email);
    const workspace = await this.workspaces.update(workspaceId, (current) => {
      if (!current.members.some((m) => m.email === address)) throw notMember(address, workspaceId);
      return { ...current, members: current.members.map((m) => (m.email === address ? { ...m, verified: true } : m)) };
    });
    await this.accounts.join(address, workspaceId);
    return workspace.members.find((m) => m.email === address)!;
  }

  /**
   * The mailbox proved it holds the address through a link that also settled the password (an
   * invitation's or a password link's, docs/security.md): every invitation of the address is
   * claimed, and the account and its memberships are verified. An invitation taken back since (no
   * member any more) is dropped.
   */
  async claim(email: string): Promise<Account> {
    const address = normalizeEmail(email);
    for (const workspaceId of (await this.accounts.get(address))?.invited_ids ?? []) {
      const workspace = await this.workspaces.get(workspaceId);
      if (workspace?.members.some((m) => m.email === address)) await this.accounts.join(address, workspaceId);
      else await this.accounts.leave(address, workspaceId);
    }
    return this.verify(address);
  }

  /**
   * The mailbox proved (a confirmation link was followed): the account is verified, and its
   * membership in every workspace it opens. Invitations stay unclaimed: the sign-up's confirmation
   * link says nothing about who chose the account's password.
   */
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
