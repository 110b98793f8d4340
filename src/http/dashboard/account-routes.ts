// The member's own account: change the password, sign out every session (both end sessions server-side).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { hashPassword, passwordMatches, passwordProblem } from '../../accounts/password.ts';
import { field, noticesOf, type Dashboard } from './context.ts';
import { accountPage } from './views/account.ts';
import type { Html } from './views/html.ts';

const send = (reply: FastifyReply, page: Html, status = 200) =>
  reply.code(status).type('text/html; charset=utf-8').send(page.text);

/** Registers the account page and its forms (behind requireSignIn). */
export async function accountRoutes(app: FastifyInstance, dashboard: Dashboard): Promise<void> {
  const { accounts, sessions } = dashboard;

  app.get('/account', async (request, reply) =>
    send(reply, accountPage({ viewer: request.signedIn.viewer, notices: noticesOf(request) })),
  );

  app.post('/account/password', async (request, reply) => {
    const { account, session, viewer } = request.signedIn;
    const refuse = (text: string, status: number) =>
      send(reply, accountPage({ viewer, notices: [{ kind: 'bad', text }] }), status);
    if (!(await passwordMatches(field(request, 'current_password'), account.password_hash)))
      return refuse('The current password is wrong.', 401);
    const problem = passwordProblem(field(request, 'password'));
    if (problem) return refuse(problem, 400);
    await accounts.setPassword(account.email, await hashPassword(field(request, 'password')));
    await sessions.endAll(account.email, session.sid);
    return reply.redirect('/dashboard/account?notice=password-changed', 303);
  });

  app.post('/account/sign-out-everywhere', async (request, reply) => {
    await sessions.endAll(request.signedIn.account.email);
    sessions.write(reply, {});
    return reply.redirect('/dashboard/sign-in?notice=signed-out-everywhere', 303);
  });
}
