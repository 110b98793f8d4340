// The dashboard's forms over plain HTTP: one visitor's cookie jar and the CSRF token of the last page read.
import { connect } from '@nats-io/transport-node';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import { ensureTopology } from '../../src/jetstream/topology.ts';
import { Outbox, type OutboxMessage } from '../../src/mail/outbox.ts';
import { createSealer } from '../../src/secrets/key.ts';
import type { TestStack } from './service.ts';

/** A cookie jar of one: the session cookie, and the CSRF token of the last page read. */
export class Visitor {
  cookie = '';
  csrf = '';

  constructor(private readonly base: string) {}

  async get(path: string): Promise<{ status: number; text: string; location: string | null }> {
    const response = await fetch(`${this.base}${path}`, { headers: { cookie: this.cookie }, redirect: 'manual' });
    this.keep(response);
    const text = await response.text();
    this.csrf = /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? this.csrf;
    return { status: response.status, text, location: response.headers.get('location') };
  }

  /** Posts a form with the last CSRF token (a `_csrf` field overrides it) and our own origin unless told otherwise. */
  async post(path: string, fields: Record<string, string>, headers: Record<string, string> = { origin: this.base }) {
    const response = await fetch(`${this.base}${path}`, {
      method: 'POST',
      headers: { cookie: this.cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ _csrf: this.csrf, ...fields }),
      redirect: 'manual',
    });
    this.keep(response);
    return { status: response.status, text: await response.text(), location: response.headers.get('location') };
  }

  private keep(response: Response) {
    const jar = new Map(
      this.cookie
        .split('; ')
        .filter(Boolean)
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair]),
    );
    for (const set of response.headers.getSetCookie()) {
      const pair = set.split(';')[0];
      jar.set(pair.slice(0, pair.indexOf('=')), pair);
    }
    this.cookie = [...jar.values()].join('; ');
  }
}

/** The stack's outbox (mail written because SMTP_URL is unset), opened with the stack's key. */
export async function outboxOf(stack: Pick<TestStack, 'env'>): Promise<OutboxMessage[]> {
  const config = loadConfig(stack.env);
  const nc = await connect({ servers: [...config.natsServers] });
  try {
    const topology = await ensureTopology(nc, config);
    return await new Outbox(topology.jsm, createSealer(config)).list();
  } finally {
    await nc.close();
  }
}

/** The last link to `path` (`/dashboard/verify`, `/dashboard/accept`, …) mailed to `email`, as a path and query. */
export async function mailedLink(stack: Pick<TestStack, 'env'>, email: string, path: string): Promise<string> {
  const mail = (await outboxOf(stack)).filter((m) => m.to === email && m.text.includes(`${path}?token=`)).at(-1);
  assert.ok(mail, `a mail to ${email} with a ${path} link`);
  const link = new URL(mail!.text.match(new RegExp(`http\\S+${path}\\?token=\\S+`))![0]);
  return `${link.pathname}${link.search}`;
}

/**
 * A new account on the dashboard at `base`: the sign-up form (one answer for every address), then
 * the sign-in form. With `confirm` (the stack), the address is confirmed through the mailed link
 * too, as an account must be before it opens any workspace.
 */
export async function signUp(
  base: string,
  email: string,
  options: { password?: string; confirm?: Pick<TestStack, 'env'> } = {},
): Promise<Visitor> {
  const password = options.password ?? 'a long enough password';
  const visitor = new Visitor(base);
  await visitor.get('/dashboard/sign-up');
  const answer = await visitor.post('/dashboard/sign-up', { email, password });
  assert.is(answer.status, 200, answer.text);
  assert.match(answer.text, /Check your mail/);
  if (options.confirm) {
    const confirmed = await visitor.get(await mailedLink(options.confirm, email, '/dashboard/verify'));
    assert.is(confirmed.status, 200, confirmed.text);
  }
  await visitor.get('/dashboard/sign-in');
  const signedIn = await visitor.post('/dashboard/sign-in', { email, password });
  assert.is(signedIn.status, 303, signedIn.text);
  await visitor.get('/dashboard/keys');
  return visitor;
}
