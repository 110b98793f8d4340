// A tiny real SMTP server on 127.0.0.1 (node:net / node:tls) that records what a client said.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';

/** A self-signed certificate for 127.0.0.1 (test use only), key and certificate in one PEM. */
export const testCertificate = readFileSync(new URL('./fixtures/smtp-tls.pem', import.meta.url), 'utf8');
const secureContext = tls.createSecureContext({ key: testCertificate, cert: testCertificate });
/** The certificate alone, for a client that is to trust it. */
export const testCa = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/.exec(testCertificate)![0];

/** What one client connection said to the server. */
export interface Session {
  commands: string[];
  /** How many commands came before the connection was encrypted (0 with implicit TLS; absent while plain). */
  encryptedAfter?: number;
  /** base64-decoded AUTH PLAIN payload, or user/pass from AUTH LOGIN. */
  auth?: { user: string; pass: string };
  mailFrom?: string;
  rcptTo: string[];
  /** The DATA section after un-stuffing, without the terminating "." line. */
  data?: string;
  /** The DATA section as it came over the wire. */
  rawData?: string;
}

/** A running fake server and the knobs a test turns. */
export interface FakeSmtp {
  port: number;
  sessions: Session[];
  /** Reply to RCPT TO (default "250 OK"). */
  rcptReply: string;
  /** Whether EHLO advertises STARTTLS (default false). */
  offerStarttls: boolean;
  close(): Promise<void>;
}

/** Starts a server speaking plain SMTP (STARTTLS when offered) or, with `implicitTls`, TLS from the first byte. */
export function startSmtp(options: { implicitTls?: boolean } = {}): Promise<FakeSmtp> {
  const sockets = new Set<net.Socket>();
  const fake: FakeSmtp = {
    port: 0,
    sessions: [],
    rcptReply: '250 OK',
    offerStarttls: false,
    close: async () => undefined,
  };
  const serve = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const session: Session = { commands: [], rcptTo: [], encryptedAfter: options.implicitTls ? 0 : undefined };
    fake.sessions.push(session);
    let stream: net.Socket = socket;
    const send = (line: string) => stream.write(`${line}\r\n`);
    let buffered = '';
    let mode: 'command' | 'data' | 'auth-plain' | 'auth-user' | 'auth-pass' = 'command';
    let loginUser = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      for (;;) {
        if (mode === 'data') {
          // The DATA section may itself start with the terminator only if empty; otherwise it ends with CRLF.CRLF.
          const end = buffered.startsWith('.\r\n') ? 0 : buffered.indexOf('\r\n.\r\n');
          if (end === -1) return;
          const raw = end === 0 ? '' : buffered.slice(0, end);
          buffered = buffered.slice(end === 0 ? 3 : end + 5);
          session.rawData = raw;
          session.data = raw
            .split('\r\n')
            .map((line) => (line.startsWith('.') ? line.slice(1) : line))
            .join('\r\n');
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
          if (fake.offerStarttls && session.encryptedAfter === undefined) send('250-STARTTLS');
          send('250 AUTH PLAIN LOGIN');
        } else if (verb === 'HELO') {
          send('250 127.0.0.1');
        } else if (verb === 'STARTTLS' && fake.offerStarttls && session.encryptedAfter === undefined) {
          send('220 2.0.0 Ready to start TLS');
          // From here on the same connection carries TLS; the client starts over with EHLO.
          socket.removeListener('data', onData);
          stream = new tls.TLSSocket(socket, { isServer: true, secureContext });
          stream.on('error', () => undefined);
          stream.on('data', onData);
          session.encryptedAfter = session.commands.length;
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
          stream.end();
        } else {
          send('502 5.5.2 command not recognized');
        }
      }
    };
    socket.on('data', onData);
    send('220 127.0.0.1 fake ESMTP');
  };
  const server = options.implicitTls
    ? tls.createServer({ key: testCertificate, cert: testCertificate }, serve)
    : net.createServer(serve);
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

/** Splits a received DATA section into its headers (lower-cased names) and its body, quoted-printable decoded. */
export function parseMessage(data: string): { headers: Record<string, string>; body: string } {
  const split = data.indexOf('\r\n\r\n');
  if (split <= 0) throw new Error('the message has no header block');
  const headers: Record<string, string> = {};
  // Folded header lines continue with whitespace.
  for (const line of data
    .slice(0, split)
    .replace(/\r\n[ \t]+/g, ' ')
    .split('\r\n')) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = data.slice(split + 4);
  if (headers['content-transfer-encoding']?.toLowerCase() === 'quoted-printable') {
    // Soft line breaks go; each =XX is one byte of the UTF-8 text.
    const parts = body.replace(/=\r\n/g, '').split(/(=[0-9A-F]{2})/);
    body = Buffer.concat(
      parts.map((part) =>
        /^=[0-9A-F]{2}$/.test(part) ? Buffer.from([parseInt(part.slice(1), 16)]) : Buffer.from(part),
      ),
    ).toString('utf8');
  }
  return { headers, body };
}
