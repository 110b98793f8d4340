// The SMTP path of the dashboard's mail: a tiny real SMTP server on 127.0.0.1 hears what createMailer sends.
import net from 'node:net';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createMailer } from '../../src/mail/mailer.ts';
import type { Outbox } from '../../src/mail/outbox.ts';
import { parseMessage, startSmtp, testCa, type FakeSmtp } from './fake-smtp.ts';

const outbox = {
  append: async () => {
    throw new Error('the outbox must not be used when SMTP_URL is set');
  },
} as unknown as Outbox;
const log = pino({ level: 'silent' });
const from = 'Shutterbus <no-reply@shutterbus.test>';
// The client trusts the fake server's self-signed certificate through nodemailer's URL options.
const trustTestCa = `tls.ca=${encodeURIComponent(testCa)}`;

async function failureOf(send: Promise<void>): Promise<Error> {
  try {
    await send;
  } catch (caught) {
    assert.instance(caught, Error, 'send rejects with an Error');
    return caught as Error;
  }
  throw new Error('the send was expected to fail');
}

const smtp = suite<{ server: FakeSmtp; tlsServer: FakeSmtp }>('mail over SMTP');

smtp.before(async (context) => {
  context.server = await startSmtp();
  context.tlsServer = await startSmtp({ implicitTls: true });
});

smtp.after(async (context) => {
  await context.server.close();
  await context.tlsServer.close();
});

smtp.before.each((context) => {
  context.server.sessions.length = 0;
  context.server.rcptReply = '250 OK';
  context.server.offerStarttls = false;
});

smtp('one message arrives with envelope, headers, body and credentials', async ({ server }) => {
  const mailer = createMailer({ smtpUrl: `smtp://user:pass@127.0.0.1:${server.port}`, from, outbox, log });
  const link = 'http://127.0.0.1:3000/verify?token=abc123';
  await mailer.send({
    to: 'ada@example.test',
    subject: 'Verify your email',
    text: `Hello,\n\nconfirm your address: ${link}\n`,
  });

  assert.is(server.sessions.length, 1, 'one connection');
  const [session] = server.sessions;
  assert.equal(session.auth, { user: 'user', pass: 'pass' }, 'credentials from the URL');
  assert.is(session.mailFrom, 'no-reply@shutterbus.test');
  assert.equal(session.rcptTo, ['ada@example.test']);
  assert.ok(session.data !== undefined, 'DATA was sent');
  assert.is(session.commands.filter((c) => c.toUpperCase() === 'DATA').length, 1, 'one message');

  const { headers, body } = parseMessage(session.data!);
  assert.is(headers.from, from);
  assert.is(headers.to, 'ada@example.test');
  assert.is(headers.subject, 'Verify your email');
  assert.ok(headers.date && !Number.isNaN(Date.parse(headers.date)), 'a Date header');
  assert.ok(body.includes(`confirm your address: ${link}`), body);
  assert.ok(body.startsWith('Hello,\r\n\r\n'), 'line breaks become CRLF');
});

smtp("every message has its own Message-ID in the sender's domain, and the log names it", async ({ server }) => {
  const logged: { msg: string; message_id?: string }[] = [];
  const recording = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) });
  const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${server.port}`, from, outbox, log: recording });
  await mailer.send({ to: 'ada@example.test', subject: 'One', text: 'one' });
  await mailer.send({ to: 'ada@example.test', subject: 'Two', text: 'two' });
  const ids = server.sessions.map((session) => parseMessage(session.data!).headers['message-id']);
  assert.is(ids.length, 2);
  for (const id of ids) assert.match(id, /^<[^<>@\s]+@shutterbus\.test>$/);
  assert.is.not(ids[0], ids[1], 'two messages, two ids');
  assert.equal(
    logged.filter((entry) => entry.msg === 'mail sent').map((entry) => entry.message_id),
    ids,
  );
});

smtp('no AUTH without credentials in the URL', async ({ server }) => {
  const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${server.port}`, from, outbox, log });
  await mailer.send({ to: 'bob@example.test', subject: 'Hi', text: 'hello' });
  assert.is(server.sessions.length, 1);
  assert.is(server.sessions[0].auth, undefined);
  assert.not.ok(
    server.sessions[0].commands.some((c) => /^AUTH/i.test(c)),
    'no AUTH command',
  );
  assert.equal(server.sessions[0].rcptTo, ['bob@example.test']);
});

smtp('percent-encoded credentials are decoded', async ({ server }) => {
  const mailer = createMailer({
    smtpUrl: `smtp://mail%40user:p%3Ass%40word@127.0.0.1:${server.port}`,
    from,
    outbox,
    log,
  });
  await mailer.send({ to: 'ada@example.test', subject: 'Hi', text: 'hello' });
  assert.equal(server.sessions[0].auth, { user: 'mail@user', pass: 'p:ss@word' });
});

smtp('lines beginning with "." arrive intact (dot-stuffing)', async ({ server }) => {
  const mailer = createMailer({ smtpUrl: `smtp://user:pass@127.0.0.1:${server.port}`, from, outbox, log });
  const text = 'first\n.\n.hidden\n..two dots\nlast';
  await mailer.send({ to: 'ada@example.test', subject: 'Dots', text });
  const { body } = parseMessage(server.sessions[0].data!);
  assert.is(body, text.replace(/\n/g, '\r\n'));
});

smtp('a long link arrives whole, carried in lines of at most 78 characters', async ({ server }) => {
  const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${server.port}`, from, outbox, log });
  const link = `http://127.0.0.1:3000/verify?token=${'a1b2c3d4'.repeat(150)}`;
  await mailer.send({
    to: 'ada@example.test',
    subject: 'Verify your email',
    text: `Hello,\n\nconfirm your address: ${link}\n`,
  });
  const [session] = server.sessions;
  const longest = Math.max(...session.rawData!.split('\r\n').map((line) => line.length));
  assert.ok(longest <= 78, `the longest line on the wire has ${longest} characters`);
  assert.ok(parseMessage(session.data!).body.endsWith(`confirm your address: ${link}`), 'the link decodes whole');
});

smtp('a server that offers STARTTLS gets credentials and message only inside TLS', async ({ server }) => {
  server.offerStarttls = true;
  const mailer = createMailer({
    smtpUrl: `smtp://user:pass@127.0.0.1:${server.port}?${trustTestCa}`,
    from,
    outbox,
    log,
  });
  await mailer.send({ to: 'ada@example.test', subject: 'Verify your email', text: 'hello' });
  const [session] = server.sessions;
  assert.ok(session.encryptedAfter !== undefined, 'the connection was upgraded');
  const plain = session.commands.slice(0, session.encryptedAfter);
  assert.equal(
    plain.map((c) => c.split(' ')[0].toUpperCase()),
    ['EHLO', 'STARTTLS'],
    'nothing but EHLO and STARTTLS in plain text',
  );
  assert.equal(session.auth, { user: 'user', pass: 'pass' });
  assert.equal(session.rcptTo, ['ada@example.test']);
  assert.is(parseMessage(session.data!).body, 'hello');
});

smtp(
  'a STARTTLS upgrade that fails (untrusted certificate) fails the send, with nothing sent in plain text',
  async ({ server }) => {
    server.offerStarttls = true;
    const mailer = createMailer({ smtpUrl: `smtp://user:pass@127.0.0.1:${server.port}`, from, outbox, log });
    const error = await failureOf(mailer.send({ to: 'ada@example.test', subject: 'Hi', text: 'hello' }));
    assert.match(error.message, /certificate/i);
    const [session] = server.sessions;
    assert.equal(
      session.commands.map((c) => c.split(' ')[0].toUpperCase()),
      ['EHLO', 'STARTTLS'],
    );
    assert.is(session.auth, undefined, 'no credentials');
    assert.is(session.data, undefined, 'no message');
  },
);

smtp('smtps:// speaks TLS from the first byte', async ({ tlsServer }) => {
  const mailer = createMailer({
    smtpUrl: `smtps://user:pass@127.0.0.1:${tlsServer.port}?${trustTestCa}`,
    from,
    outbox,
    log,
  });
  await mailer.send({ to: 'ada@example.test', subject: 'Hi', text: 'over TLS' });
  const session = tlsServer.sessions.at(-1)!;
  assert.is(session.encryptedAfter, 0);
  assert.equal(session.auth, { user: 'user', pass: 'pass' });
  assert.is(parseMessage(session.data!).body, 'over TLS');
});

smtp('a refused recipient makes the send fail', async ({ server }) => {
  server.rcptReply = '550 5.1.1 mailbox unavailable';
  const mailer = createMailer({ smtpUrl: `smtp://user:pass@127.0.0.1:${server.port}`, from, outbox, log });
  const error = await failureOf(mailer.send({ to: 'nobody@example.test', subject: 'Verify your email', text: 'link' }));
  assert.match(error.message, /550/);
  assert.is(server.sessions[0].data, undefined, 'no DATA after the refusal');
});

smtp('a server that is not there makes the send fail', async () => {
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, from, outbox, log });
  await failureOf(mailer.send({ to: 'ada@example.test', subject: 'Hi', text: 'hello' }));
});

smtp('a server that accepts the connection but never greets fails the send within seconds', async () => {
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((socket) => sockets.add(socket.on('error', () => undefined)));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const port = (silent.address() as net.AddressInfo).port;
  try {
    const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, from, outbox, log });
    const started = Date.now();
    const error = await failureOf(mailer.send({ to: 'ada@example.test', subject: 'Hi', text: 'hello' }));
    const seconds = (Date.now() - started) / 1000;
    assert.match(error.message, /greeting/i);
    assert.ok(seconds < 8, `failed after ${seconds} s`);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  }
});

smtp.run();
