// The SMTP path of the dashboard's mail: a tiny real SMTP server on 127.0.0.1 (node:net) hears what createMailer sends.
import net from 'node:net';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createMailer } from '../../src/mail/mailer.ts';
import type { Outbox } from '../../src/mail/outbox.ts';

/** What one client connection said to the server. */
interface Session {
  commands: string[];
  /** base64-decoded AUTH PLAIN payload, or user/pass from AUTH LOGIN. */
  auth?: { user: string; pass: string };
  mailFrom?: string;
  rcptTo: string[];
  /** The DATA section after un-stuffing, without the terminating "." line. */
  data?: string;
}

interface FakeSmtp {
  port: number;
  sessions: Session[];
  /** Reply to RCPT TO (default "250 OK"). */
  rcptReply: string;
  close(): Promise<void>;
}

function startSmtp(): Promise<FakeSmtp> {
  const sockets = new Set<net.Socket>();
  const fake: FakeSmtp = { port: 0, sessions: [], rcptReply: '250 OK', close: async () => undefined };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const session: Session = { commands: [], rcptTo: [] };
    fake.sessions.push(session);
    const send = (line: string) => socket.write(`${line}\r\n`);
    let buffered = '';
    let mode: 'command' | 'data' | 'auth-plain' | 'auth-user' | 'auth-pass' = 'command';
    let loginUser = '';
    send('220 127.0.0.1 fake ESMTP');
    socket.on('data', (chunk) => {
      buffered += chunk.toString('utf8');
      for (;;) {
        if (mode === 'data') {
          // The DATA section may itself start with the terminator only if empty; otherwise it ends with CRLF.CRLF.
          const end = buffered.startsWith('.\r\n') ? 0 : buffered.indexOf('\r\n.\r\n');
          if (end === -1) return;
          const raw = end === 0 ? '' : buffered.slice(0, end);
          buffered = buffered.slice(end === 0 ? 3 : end + 5);
          session.data = raw.split('\r\n').map((line) => (line.startsWith('.') ? line.slice(1) : line)).join('\r\n');
          mode = 'command';
          send('250 2.0.0 queued');
          continue;
        }
        const eol = buffered.indexOf('\r\n');
        if (eol === -1) return;
        const line = buffered.slice(0, eol);
        buffered = buffered.slice(eol + 2);
        session.commands.push(line);
        if (mode === 'auth-plain') {
          const [, user, pass] = Buffer.from(line, 'base64').toString('utf8').split('\0');
          session.auth = { user, pass };
          mode = 'command';
          send('235 2.7.0 Authentication successful');
          continue;
        }
        if (mode === 'auth-user') {
          loginUser = Buffer.from(line, 'base64').toString('utf8');
          mode = 'auth-pass';
          send('334 UGFzc3dvcmQ6');
          continue;
        }
        if (mode === 'auth-pass') {
          session.auth = { user: loginUser, pass: Buffer.from(line, 'base64').toString('utf8') };
          mode = 'command';
          send('235 2.7.0 Authentication successful');
          continue;
        }
        const verb = line.split(' ')[0].toUpperCase();
        if (verb === 'EHLO') {
          send('250-127.0.0.1 greets you');
          send('250-8BITMIME');
          send('250 AUTH PLAIN LOGIN');
        } else if (verb === 'HELO') {
          send('250 127.0.0.1');
        } else if (verb === 'AUTH') {
          const [, mechanism, initial] = line.split(' ');
          if (mechanism.toUpperCase() === 'PLAIN' && initial) {
            const [, user, pass] = Buffer.from(initial, 'base64').toString('utf8').split('\0');
            session.auth = { user, pass };
            send('235 2.7.0 Authentication successful');
          } else if (mechanism.toUpperCase() === 'PLAIN') {
            mode = 'auth-plain';
            send('334 ');
          } else if (mechanism.toUpperCase() === 'LOGIN') {
            mode = 'auth-user';
            send('334 VXNlcm5hbWU6');
          } else {
            send('504 5.5.4 mechanism not supported');
          }
        } else if (verb === 'MAIL') {
          session.mailFrom = /^MAIL FROM:\s*<([^>]*)>/i.exec(line)?.[1];
          send('250 2.1.0 OK');
        } else if (verb === 'RCPT') {
          const to = /^RCPT TO:\s*<([^>]*)>/i.exec(line)?.[1];
          if (fake.rcptReply.startsWith('2') && to) session.rcptTo.push(to);
          send(fake.rcptReply);
        } else if (verb === 'DATA') {
          mode = 'data';
          send('354 End data with <CR><LF>.<CR><LF>');
        } else if (verb === 'RSET' || verb === 'NOOP') {
          send('250 OK');
        } else if (verb === 'QUIT') {
          send('221 2.0.0 Bye');
          socket.end();
        } else {
          send('502 5.5.2 command not recognized');
        }
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      fake.port = (server.address() as net.AddressInfo).port;
      fake.close = () =>
        new Promise<void>((done) => {
          for (const socket of sockets) socket.destroy();
          server.close(() => done());
        });
      resolve(fake);
    });
  });
}

/** Splits a received DATA section into its headers (lower-cased names) and body. */
function parseMessage(data: string): { headers: Record<string, string>; body: string } {
  const split = data.indexOf('\r\n\r\n');
  assert.ok(split > 0, 'message has a header block and a body');
  const headers: Record<string, string> = {};
  for (const line of data.slice(0, split).split('\r\n')) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { headers, body: data.slice(split + 4) };
}

const outbox = {
  append: async () => {
    throw new Error('the outbox must not be used when SMTP_URL is set');
  },
} as unknown as Outbox;
const log = pino({ level: 'silent' });
const from = 'Shutterbus <no-reply@shutterbus.test>';

const smtp = suite<{ server: FakeSmtp }>('mail over SMTP');

smtp.before(async (context) => {
  context.server = await startSmtp();
});

smtp.after(async (context) => {
  await context.server.close();
});

smtp.before.each((context) => {
  context.server.sessions.length = 0;
  context.server.rcptReply = '250 OK';
});

smtp('one message arrives with envelope, headers, body and credentials', async ({ server }) => {
  const mailer = createMailer({ smtpUrl: `smtp://user:pass@127.0.0.1:${server.port}`, from, outbox, log });
  const link = 'http://127.0.0.1:3000/verify?token=abc123';
  await mailer.send({ to: 'ada@example.test', subject: 'Verify your email', text: `Hello,\n\nconfirm your address: ${link}\n` });

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
  assert.ok(body.includes(`confirm your address: ${link}`), body);
  assert.ok(body.startsWith('Hello,\r\n\r\n'), 'line breaks become CRLF');
});

smtp('no AUTH without credentials in the URL', async ({ server }) => {
  const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${server.port}`, from, outbox, log });
  await mailer.send({ to: 'bob@example.test', subject: 'Hi', text: 'hello' });
  assert.is(server.sessions.length, 1);
  assert.is(server.sessions[0].auth, undefined);
  assert.not.ok(server.sessions[0].commands.some((c) => /^AUTH/i.test(c)), 'no AUTH command');
  assert.equal(server.sessions[0].rcptTo, ['bob@example.test']);
});

smtp('percent-encoded credentials are decoded', async ({ server }) => {
  const mailer = createMailer({ smtpUrl: `smtp://mail%40user:p%3Ass%40word@127.0.0.1:${server.port}`, from, outbox, log });
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

smtp('a refused recipient makes the send fail', async ({ server }) => {
  server.rcptReply = '550 5.1.1 mailbox unavailable';
  const mailer = createMailer({ smtpUrl: `smtp://user:pass@127.0.0.1:${server.port}`, from, outbox, log });
  let error: unknown;
  try {
    await mailer.send({ to: 'nobody@example.test', subject: 'Verify your email', text: 'link' });
  } catch (caught) {
    error = caught;
  }
  assert.instance(error, Error, 'send rejects');
  assert.match((error as Error).message, /550/);
  assert.is(server.sessions[0].data, undefined, 'no DATA after the refusal');
});

smtp('a server that is not there makes the send fail', async () => {
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, from, outbox, log });
  let error: unknown;
  try {
    await mailer.send({ to: 'ada@example.test', subject: 'Hi', text: 'hello' });
  } catch (caught) {
    error = caught;
  }
  assert.instance(error, Error, 'send rejects');
});

smtp.run();
