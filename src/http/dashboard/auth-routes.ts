// Sign up, sign in and out, email verification and invitations.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { emailPattern, type Account } from '../../accounts/accounts.ts';
import { hashPassword, passwordMatches, passwordProblem } from '../../accounts/password.ts';
import { normalizeEmail, type Role } from '../../workspaces/workspace.ts';
import { clientIp, field, noticesOf, sessionOf, type Dashboard } from './context.ts';
import type { Html } from './views/html.ts';
import type { TokenBody } from './tokens.ts';
import { invitationMail, type InviteToken } from './invitations.ts';
import { checkMailPage, choosePasswordPage, credentialsPage, messagePage } from './views/auth.ts';

export type { InviteToken } from './invitations.ts';

const DAY_MS = 24 * 3600 * 1000;

/** A verification link's token. */
interface VerifyToken extends TokenBody {
  purpose: 'verify';
  email: string;
}

/** The link of the "this address has an account" mail; `nonce` makes it work once. */
interface PasswordToken extends TokenBody {
  purpose: 'password';
  email: string;
  nonce: string;
}

const PASSWORD_LINK_LIFETIME_MS = 3600 * 1000;

const send = (reply: FastifyReply, page: Html, status = 200) =>
  reply.code(status).type('text/html; charset=utf-8').send(page.text);
const minutes = (seconds: number) => Math.max(1, Math.ceil(seconds / 60));

/** Mails a verification link to `email`; a failing mail server is logged, not fatal. */
export async function sendVerification(dashboard: Dashboard, email: string): Promise<void> {
  const token = dashboard.sessions.sealLink<VerifyToken>({ purpose: 'verify', email, exp: Date.now() + 3 * DAY_MS });
  const link = `${dashboard.config.baseUrl}/dashboard/verify?token=${token}`;
  await dashboard.mailer
    .send({
      to: email,
      subject: 'Confirm your email address for Shutterbus',
      text: `Hello,\n\nplease confirm your email address by opening this link (it works for three days):\n\n${link}\n\nFree workspaces can use their keys once a member has confirmed an address.\n\nShutterbus`,
    })
    .catch((err) => dashboard.log.warn({ err, to: email }, 'verification mail failed'));
}

/**
 * Mails an address that signed up again (an account or an invitation already): a way to sign in, or
 * to choose a password with a link that works once. No workspace is named and no invitation re-sent.
 */
async function sendAccountExists(dashboard: Dashboard, email: string): Promise<void> {
  const account = await dashboard.accounts.get(email);
  if (!account) return;
  const token = dashboard.sessions.sealLink<PasswordToken>({
    purpose: 'password',
    email,
    nonce: account.token_nonce,
    exp: Date.now() + PASSWORD_LINK_LIFETIME_MS,
  });
  const base = dashboard.config.baseUrl;
  await dashboard.mailer
    .send({
      to: email,
      subject: 'Your Shutterbus account',
      text: `Hello,\n\nsomeone asked to create a Shutterbus account with this address, which has one already (or an invitation).\n\nIf it was you, sign in at ${base}/dashboard/sign-in, or choose a new password with this link (it works once, for an hour):\n\n${base}/dashboard/password?token=${token}\n\nIf it was not you, you need do nothing: your password has not changed.\n\nShutterbus`,
    })
    .catch((err) => dashboard.log.warn({ err, to: email }, 'account mail failed'));
}

/**
 * Mails an invitation link to an account added to `workspaceId` (invitations.ts): where the
 * mailbox's owner claims it. A failing mail server is logged.
 */
export async function sendInvitation(
  dashboard: Dashboard,
  account: Account,
  workspaceId: string,
  by?: { inviter: string; role: Role },
): Promise<void> {
  await dashboard.mailer
    .send(invitationMail(dashboard.sessionSecret, dashboard.config.baseUrl, account, workspaceId, by))
    .catch((err) => dashboard.log.warn({ err, to: account.email }, 'invitation mail failed'));
}

/** Registers the account routes. */
export async function authRoutes(app: FastifyInstance, dashboard: Dashboard): Promise<void> {
  const { accounts, membership, sessions, limits } = dashboard;

  app.get('/sign-up', async (request, reply) => {
    if ((await sessions.live(request))?.email) return reply.redirect('/dashboard/keys', 303);
    const session = sessionOf(dashboard, request, reply);
    return send(reply, credentialsPage({ mode: 'sign-up', csrf: sessions.csrfToken(session) }));
  });

  app.post('/sign-up', async (request, reply) => {
    const session = sessionOf(dashboard, request, reply);
    const email = normalizeEmail(field(request, 'email'));
    const password = field(request, 'password');
    const again = (text: string, status: number) =>
      send(
        reply,
        credentialsPage({
          mode: 'sign-up',
          csrf: sessions.csrfToken(session),
          email,
          notices: [{ kind: 'bad', text }],
        }),
        status,
      );
    const wait = limits.signUpByIp.hit(clientIp(request));
    if (wait) return again(`Too many accounts created from your address; try again in ${minutes(wait)} minutes.`, 429);
    if (!emailPattern.test(email)) return again('Enter a valid email address.', 400);
    const problem = passwordProblem(password);
    if (problem) return again(problem, 400);
    // One answer whoever owns the address, new, signed up or invited: the mailbox learns which (docs/security.md).
    const signUp = await membership.signUp(email, await hashPassword(password));
    if (!limits.mailByEmail.hit(email)) {
      if (signUp.outcome === 'created') await sendVerification(dashboard, email);
      else await sendAccountExists(dashboard, email);
    }
    return send(reply, checkMailPage(email, Boolean(dashboard.config.smtpUrl)));
  });

  app.get('/sign-in', async (request, reply) => {
    if ((await sessions.live(request))?.email) return reply.redirect('/dashboard/keys', 303);
    const session = sessionOf(dashboard, request, reply);
    return send(
      reply,
      credentialsPage({ mode: 'sign-in', csrf: sessions.csrfToken(session), notices: noticesOf(request) }),
    );
  });

  app.post('/sign-in', async (request, reply) => {
    const session = sessionOf(dashboard, request, reply);
    const email = normalizeEmail(field(request, 'email'));
    const again = (text: string, status: number) =>
      send(
        reply,
        credentialsPage({
          mode: 'sign-in',
          csrf: sessions.csrfToken(session),
          email,
          notices: [{ kind: 'bad', text }],
        }),
        status,
      );
    // Limits that slow a guesser without locking the owner out (sign-in-guard.ts): a refusal is for this address only.
    const admission = await limits.signIn.admit(email, clientIp(request), sessions.knownDevice(request, email));
    if (admission.kind === 'refused') {
      reply.header('retry-after', String(admission.seconds));
      const when = admission.seconds < 60 ? `${admission.seconds} seconds` : `${minutes(admission.seconds)} minutes`;
      const why =
        admission.why === 'busy'
          ? 'Sign-in to this account is slowed after repeated wrong passwords.'
          : 'Too many sign-in attempts from your address.';
      return again(`${why} Try again in ${when}.`, 429);
    }
    const account = await accounts.get(email);
    const matched =
      (await passwordMatches(field(request, 'password'), account?.password_hash ?? null)) && account !== null;
    admission.done(matched);
    if (!matched || !account) return again('The email or the password is wrong.', 401);
    await sessions.signIn(reply, email, account.workspace_ids[0]);
    return reply.redirect('/dashboard/keys', 303);
  });

  app.post('/sign-out', async (request, reply) => {
    await sessions.signOut(request, reply);
    return reply.redirect('/dashboard/sign-in?notice=signed-out', 303);
  });

  app.get('/verify', async (request, reply) => {
    const token = sessions.openLink<VerifyToken>('verify', (request.query as Record<string, string>).token);
    if (!token || !(await accounts.get(token.email))) {
      return send(
        reply,
        messagePage({
          title: 'Link not valid',
          kind: 'bad',
          text: 'This link is not valid or has expired. Sign in and ask for a new one on the keys page.',
          link: { href: '/dashboard/sign-in', label: 'Sign in' },
        }),
        400,
      );
    }
    await membership.verify(token.email);
    return send(
      reply,
      messagePage({
        title: 'Email confirmed',
        text: `Thank you: ${token.email} is confirmed. Keys of free workspaces you belong to work now.`,
        link: { href: '/dashboard/keys', label: 'Go to your keys' },
      }),
    );
  });

  // The one page here for a signed-in account, confirmed or not: asking again for the link mailed at sign-up.
  app.post('/verify/resend', async (request, reply) => {
    const session = await sessions.live(request);
    const account = session?.email ? await accounts.get(session.email) : null;
    if (!account || account.password_hash === null) return reply.redirect('/dashboard/sign-in', 303);
    if (account.verified) return reply.redirect('/dashboard/keys', 303);
    const wait = limits.mailByEmail.hit(account.email);
    if (wait)
      return send(
        reply,
        messagePage({
          title: 'Please wait',
          kind: 'warn',
          text: `We sent several links already. Try again in ${minutes(wait)} minutes.`,
          link: { href: '/dashboard/keys', label: 'Back' },
        }),
        429,
      );
    await sendVerification(dashboard, account.email);
    return reply.redirect(`/dashboard/keys?notice=${dashboard.config.smtpUrl ? 'link-sent' : 'link-in-outbox'}`, 303);
  });

  // An invitation's or a password mail's link: its token and account while it still works (choosing
  // a password gives the account a new nonce, which spends the link).
  const openAccountLink = async <T extends InviteToken | PasswordToken>(
    purpose: T['purpose'],
    raw: string | undefined,
  ) => {
    const token = sessions.openLink<T>(purpose, raw);
    const account = token ? await accounts.get(token.email) : null;
    return token && account && account.token_nonce === token.nonce ? { token, account } : null;
  };
  /** The answer to a link that does not work (any more); `what` is "This invitation" or "This link". */
  const invalidLink = (reply: FastifyReply, what: string) =>
    send(
      reply,
      messagePage({
        title: 'Link not valid',
        kind: 'bad',
        text: `${what} is not valid any more: it expired, or a password was already chosen with it.`,
        link: { href: '/dashboard/sign-in', label: 'Sign in' },
      }),
      400,
    );

  // An invitation's link: the mailbox's owner claims it, by being signed in to the account already
  // (who knows its password and holds the mailbox), or else by choosing the account's password, which
  // replaces any password someone chose for the address before and ends every session of it.
  app.get('/accept', async (request, reply) => {
    const raw = (request.query as Record<string, string>).token;
    const found = await openAccountLink<InviteToken>('invite', raw);
    if (!found) return invalidLink(reply, 'This invitation');
    const signedInAs = (await sessions.live(request))?.email;
    if (found.account.password_hash !== null && signedInAs === found.account.email) {
      await membership.claim(found.account.email);
      await sessions.signIn(reply, found.account.email, found.token.ws);
      return reply.redirect('/dashboard/keys', 303);
    }
    const session = sessionOf(dashboard, request, reply);
    return send(
      reply,
      choosePasswordPage({ csrf: sessions.csrfToken(session), email: found.account.email, token: raw }),
    );
  });

  app.post('/accept', async (request, reply) => {
    const raw = field(request, 'token');
    const found = await openAccountLink<InviteToken>('invite', raw);
    if (!found) return invalidLink(reply, 'This invitation');
    const problem = passwordProblem(field(request, 'password'));
    if (problem) {
      const session = sessionOf(dashboard, request, reply);
      return send(
        reply,
        choosePasswordPage({
          csrf: sessions.csrfToken(session),
          email: found.account.email,
          token: raw,
          notices: [{ kind: 'bad', text: problem }],
        }),
        400,
      );
    }
    // The link is spent with the password (a new nonce), and nobody signed in with an earlier one stays.
    await accounts.setPassword(found.account.email, await hashPassword(field(request, 'password')));
    await sessions.endAll(found.account.email);
    await membership.claim(found.account.email);
    await sessions.signIn(reply, found.account.email, found.token.ws);
    return reply.redirect('/dashboard/keys', 303);
  });

  // The link of the "this address has an account" mail: the mailbox's owner chooses a (new) password.
  app.get('/password', async (request, reply) => {
    const raw = (request.query as Record<string, string>).token;
    const account = (await openAccountLink<PasswordToken>('password', raw))?.account;
    if (!account) return invalidLink(reply, 'This link');
    const session = sessionOf(dashboard, request, reply);
    return send(
      reply,
      choosePasswordPage({ csrf: sessions.csrfToken(session), email: account.email, token: raw, action: 'password' }),
    );
  });

  app.post('/password', async (request, reply) => {
    const raw = field(request, 'token');
    const account = (await openAccountLink<PasswordToken>('password', raw))?.account;
    if (!account) return invalidLink(reply, 'This link');
    const problem = passwordProblem(field(request, 'password'));
    if (problem) {
      const session = sessionOf(dashboard, request, reply);
      return send(
        reply,
        choosePasswordPage({
          csrf: sessions.csrfToken(session),
          email: account.email,
          token: raw,
          action: 'password',
          notices: [{ kind: 'bad', text: problem }],
        }),
        400,
      );
    }
    // The link is spent with the password (a new nonce), every earlier session ends, and the mailbox
    // is proven with the password settled: its invitations are claimed.
    await accounts.setPassword(account.email, await hashPassword(field(request, 'password')));
    await sessions.endAll(account.email);
    await membership.claim(account.email);
    await sessions.signIn(reply, account.email, account.workspace_ids[0]);
    return reply.redirect('/dashboard/keys?notice=password-changed', 303);
  });
}
