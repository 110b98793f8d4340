// The invitation mail, for the dashboard's members page and the CLI's `workspace create --owner` and
// `member add` alike: its link is the one way an invitation is claimed (docs/security.md).
import type { Account } from '../../accounts/accounts.ts';
import type { Role } from '../../workspaces/workspace.ts';
import { seal, type TokenBody } from './tokens.ts';

/** How long an invitation link works. */
export const INVITE_LIFETIME_MS = 7 * 24 * 3600 * 1000;

/** An invitation link's token; `nonce` ties it to the account until a password is next chosen. */
export interface InviteToken extends TokenBody {
  purpose: 'invite';
  email: string;
  nonce: string;
  ws: string;
}

/**
 * The mail inviting `account`'s address to `workspaceId`: its link, sealed with the dashboard's
 * session secret, opens a page where the mailbox's owner claims the invitation, by choosing the
 * account's password or by being signed in to it already. `by`: the member who invited; absent, the
 * operator did.
 */
export function invitationMail(
  secret: string,
  baseUrl: string,
  account: Pick<Account, 'email' | 'token_nonce'>,
  workspaceId: string,
  by?: { inviter: string; role: Role },
): { to: string; subject: string; text: string } {
  const token = seal<InviteToken>(secret, {
    purpose: 'invite',
    email: account.email,
    nonce: account.token_nonce,
    ws: workspaceId,
    exp: Date.now() + INVITE_LIFETIME_MS,
  });
  const link = `${baseUrl}/dashboard/accept?token=${token}`;
  const why = by
    ? `${by.inviter} added you as ${by.role === 'admin' ? 'an' : 'a'} ${by.role} of the Shutterbus workspace ${workspaceId}.`
    : `You were added to the Shutterbus workspace ${workspaceId}.`;
  return {
    to: account.email,
    subject: by ? `${by.inviter} invited you to a Shutterbus workspace` : 'Your invitation to Shutterbus',
    text: `Hello,\n\n${why}\n\nJoin with this link (it works for seven days):\n\n${link}\n\nYou choose the password of your Shutterbus account there, which also confirms your address. If you have an account and want to keep its password, sign in first at ${baseUrl}/dashboard/sign-in, then open the link.\n\nShutterbus`,
  };
}
