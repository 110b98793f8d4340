// The dashboard's accounts against a stranger, over HTTP behind a trusted proxy (TRUST_PROXY, so
// each client has its own address): a guesser cannot lock the owner out, sign-up tells nothing
// about an address, and sessions end server-side (a copied cookie stops working).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mailedLink } from '../helpers/visitor.ts';
import { shutterbus } from '../helpers/cli.ts';
import { startService, startStack, type TestService, type TestStack } from '../helpers/service.ts';

const accounts = suite('dashboard accounts: sign-in limits, sign-up, server-side sessions');
let stack: TestStack;
let service: TestService;
const password = 'a long enough password';

accounts.before(async () => {
  stack = await startStack();
  // The test talks to the service from 127.0.0.1, the proxy it trusts; X-Forwarded-For names the client.
  service = await startService(stack, { ROLES: 'ingress', TRUST_PROXY: '127.0.0.1' });
});
accounts.after(async () => {
  await service?.close();
  await stack?.stop();
});

/** A browser of one: its cookies, the CSRF token of the last page, and the address it comes from. */
class Browser {
  private readonly jar = new Map<string, string>();
  csrf = '';
  constructor(readonly address: string) {}

  get cookie(): string {
    return [...this.jar.values()].join('; ');
  }
  set cookie(value: string) {
    this.jar.clear();
    for (const pair of value.split('; ').filter(Boolean)) this.jar.set(pair.slice(0, pair.indexOf('=')), pair);
  }

  async get(path: string) {
    const response = await fetch(`${service.base}${path}`, { headers: this.headers(), redirect: 'manual' });
    this.keep(response);
    const text = await response.text();
    this.csrf = /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? this.csrf;
    return { status: response.status, text, location: response.headers.get('location') };
  }

  async post(path: string, fields: Record<string, string>) {
    const started = Date.now();
    const response = await fetch(`${service.base}${path}`, {
      method: 'POST',
      headers: { ...this.headers(), 'content-type': 'application/x-www-form-urlencoded', origin: service.base },
      body: new URLSearchParams({ _csrf: this.csrf, ...fields }),
      redirect: 'manual',
    });
    this.keep(response);
    const text = await response.text();
    return {
      status: response.status,
      text,
      location: response.headers.get('location'),
      ms: Date.now() - started,
      cookies: response.headers.getSetCookie(),
    };
  }

  async signIn(email: string, secret = password) {
    await this.get('/dashboard/sign-in');
    return this.post('/dashboard/sign-in', { email, password: secret });
  }

  private headers() {
    return { cookie: this.cookie, 'x-forwarded-for': this.address };
  }
  private keep(response: Response) {
    for (const set of response.headers.getSetCookie()) {
      const pair = set.split(';')[0];
      this.jar.set(pair.slice(0, pair.indexOf('=')), pair);
    }
  }
}

async function signUp(email: string, address: string) {
  const browser = new Browser(address);
  await browser.get('/dashboard/sign-up');
  return { browser, answer: await browser.post('/dashboard/sign-up', { email, password }) };
}

async function outboxTo(to: string): Promise<{ subject: string; text: string }[]> {
  const outbox = (await shutterbus(stack, 'mail', 'outbox')).json.messages as {
    to: string;
    subject: string;
    text: string;
  }[];
  return outbox.filter((m) => m.to === to);
}

accounts("a stranger guessing the owner's password from many addresses never locks the owner out", async () => {
  const { answer } = await signUp('owner@example.com', '198.51.100.1');
  assert.is(answer.status, 200);
  const laptop = new Browser('198.51.100.1');
  assert.is((await laptop.signIn('owner@example.com')).status, 303);

  // Five wrong passwords from one address: that address is refused for this account, the right password too.
  const stranger = new Browser('203.0.113.7');
  for (let attempt = 0; attempt < 5; attempt++)
    assert.is((await stranger.signIn('owner@example.com', `guess ${attempt}`)).status, 401);
  const refused = await stranger.signIn('owner@example.com');
  assert.is(refused.status, 429);
  assert.match(refused.text, /Too many sign-in attempts from your address/);
  // From more addresses the guesses go on, but each answer comes slower.
  const elsewhere = new Browser('203.0.113.8');
  const slowed = await elsewhere.signIn('owner@example.com', 'guess 5');
  assert.is(slowed.status, 401);
  assert.ok(slowed.ms >= 450, `answered after ${slowed.ms} ms`);
  const slower = await elsewhere.signIn('owner@example.com', 'guess 6');
  assert.ok(slower.ms >= 950, `answered after ${slower.ms} ms`);

  // The owner's own browser signs in at once with the right password, from its usual address...
  await laptop.get('/dashboard/keys');
  assert.is((await laptop.post('/dashboard/sign-out', {})).status, 303);
  const own = await laptop.signIn('owner@example.com');
  assert.is(own.status, 303, own.text);
  assert.ok(own.ms < 450, `not slowed: ${own.ms} ms`);
  // ...and a new browser of the owner's, elsewhere, gets in too, only more slowly: no lock of the account.
  const phone = new Browser('192.0.2.50');
  const late = await phone.signIn('owner@example.com');
  assert.is(late.status, 303, late.text);
  assert.ok(late.ms >= 1900, `slowed: ${late.ms} ms`);
});

accounts(
  'sign-up answers the same for a new, an existing and an invited address, and re-sends no invitation',
  async () => {
    await signUp('existing@example.com', '198.51.100.2');
    const created = (await shutterbus(stack, 'workspace', 'create', '--plan', 'pro', '--owner', 'boss@example.com'))
      .json;
    await shutterbus(
      stack,
      'member',
      'add',
      '--workspace',
      created.workspace_id,
      '--email',
      'invited@example.com',
      '--role',
      'member',
    );

    const answers = [];
    for (const email of ['brand.new@example.com', 'existing@example.com', 'invited@example.com']) {
      const { answer, browser } = await signUp(email, '198.51.100.3');
      const keys = await browser.get('/dashboard/keys');
      answers.push({
        status: answer.status,
        text: answer.text.replaceAll(email, 'EMAIL'),
        signedIn: keys.status,
        cookies: answer.cookies.map((c) => c.split('=')[0]),
      });
    }
    assert.equal(answers[1], answers[0], 'an existing address answers like a new one');
    assert.equal(answers[2], answers[0], 'an invited address answers like a new one');
    assert.is(answers[0].status, 200);
    assert.is(answers[0].signedIn, 303, 'nobody is signed in by the sign-up form');

    // The mailboxes learn which: a confirmation for the new one, a sign-in note for the other two; no invitation link.
    assert.match((await outboxTo('brand.new@example.com')).at(-1)!.text, /\/dashboard\/verify\?token=/);
    for (const email of ['existing@example.com', 'invited@example.com']) {
      const mails = await outboxTo(email);
      // The CLI mailed the invited address its invitation; the existing one had its confirmation.
      assert.is(mails.length, 2, `${email}: one new mail`);
      assert.match(mails.at(-1)!.text, /has one already/);
      assert.not.match(mails.at(-1)!.text, /\/dashboard\/accept\?token=/);
      assert.not.match(mails.at(-1)!.text, /\/dashboard\/verify\?token=/);
    }
    // The password typed at the sign-up form was set for none of them.
    assert.is((await new Browser('198.51.100.4').signIn('invited@example.com')).status, 401);
  },
);

accounts(
  'a copied session cookie stops working after sign-out, "sign out everywhere" and a password change',
  async () => {
    await signUp('sessions@example.com', '198.51.100.5');
    // Confirmed: an account whose address is not opens no page of a workspace (docs/security.md).
    assert.is(
      (await fetch(`${service.base}${await mailedLink(stack, 'sessions@example.com', '/dashboard/verify')}`)).status,
      200,
    );
    const desk = new Browser('198.51.100.5');
    assert.is((await desk.signIn('sessions@example.com')).status, 303);
    assert.is((await desk.get('/dashboard/keys')).status, 200);

    // Sign-out: a copy of the cookie taken before is refused from then on.
    const stolen = new Browser('203.0.113.9');
    stolen.cookie = desk.cookie;
    assert.is((await stolen.get('/dashboard/keys')).status, 200, 'the copy works while the session lasts');
    await desk.post('/dashboard/sign-out', {});
    const after = await stolen.get('/dashboard/keys');
    assert.is(after.status, 303);
    assert.is(after.location, '/dashboard/sign-in');

    // "Sign out everywhere" ends every session of the account, from any of its browsers.
    const first = new Browser('198.51.100.5');
    const second = new Browser('198.51.100.6');
    assert.is((await first.signIn('sessions@example.com')).status, 303);
    assert.is((await second.signIn('sessions@example.com')).status, 303);
    await second.get('/dashboard/account');
    const everywhere = await second.post('/dashboard/account/sign-out-everywhere', {});
    assert.is(everywhere.status, 303);
    assert.is((await first.get('/dashboard/keys')).location, '/dashboard/sign-in');
    assert.is((await second.get('/dashboard/keys')).location, '/dashboard/sign-in');

    // A password change keeps the browser that made it and ends the others.
    const keeper = new Browser('198.51.100.5');
    const other = new Browser('198.51.100.7');
    assert.is((await keeper.signIn('sessions@example.com')).status, 303);
    assert.is((await other.signIn('sessions@example.com')).status, 303);
    await keeper.get('/dashboard/account');
    assert.is(
      (
        await keeper.post('/dashboard/account/password', {
          current_password: 'not it',
          password: 'a brand new password',
        })
      ).status,
      401,
    );
    assert.is(
      (
        await keeper.post('/dashboard/account/password', {
          current_password: password,
          password: 'a brand new password',
        })
      ).status,
      303,
    );
    assert.is((await keeper.get('/dashboard/keys')).status, 200);
    assert.is((await other.get('/dashboard/keys')).location, '/dashboard/sign-in');
    assert.is(
      (await new Browser('198.51.100.8').signIn('sessions@example.com')).status,
      401,
      'the old password is gone',
    );
    assert.is((await new Browser('198.51.100.8').signIn('sessions@example.com', 'a brand new password')).status, 303);
  },
);

accounts.run();
