// A minimal SMTP client over node:net / node:tls: EHLO, optional AUTH PLAIN, one message per connection.
import net from 'node:net';
import tls from 'node:tls';

/** One plain-text message. */
export interface MailMessage {
  from: string;
  to: string;
  subject: string;
  text: string;
}

const TIMEOUT_MS = 15_000;

/** Sends one message to `smtp://[user:pass@]host[:port]` (plain) or `smtps://…` (TLS from the first byte). */
export async function sendSmtp(smtpUrl: string, message: MailMessage): Promise<void> {
  const url = new URL(smtpUrl);
  const secure = url.protocol === 'smtps:';
  const port = Number(url.port || (secure ? 465 : 25));
  const socket: net.Socket = secure ? tls.connect({ host: url.hostname, port, servername: url.hostname }) : net.connect({ host: url.hostname, port });
  socket.setTimeout(TIMEOUT_MS, () => socket.destroy(new Error('SMTP server timed out')));
  let buffered = '';
  const waiters: ((line: string) => void)[] = [];
  const replies: string[] = [];
  socket.on('data', (chunk) => {
    buffered += chunk.toString('utf8');
    // A reply ends with a line "NNN text" (a dash after the code means more lines follow).
    for (let end = buffered.indexOf('\r\n'); end !== -1; end = buffered.indexOf('\r\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (/^\d{3} /.test(line) || /^\d{3}$/.test(line)) {
        const waiter = waiters.shift();
        if (waiter) waiter(line);
        else replies.push(line);
      }
    }
  });
  const failed = new Promise<never>((_, reject) => {
    socket.once('error', reject);
    socket.once('close', () => reject(new Error('SMTP connection closed')));
  });
  failed.catch(() => undefined);
  const reply = () => Promise.race([failed, new Promise<string>((resolve) => (replies.length ? resolve(replies.shift()!) : waiters.push(resolve)))]);
  const expect = async (command: string | null, ok: number[]) => {
    if (command !== null) socket.write(`${command}\r\n`);
    const line = await reply();
    if (!ok.includes(Number(line.slice(0, 3)))) throw new Error(`SMTP ${command?.split(' ')[0] ?? 'greeting'} refused: ${line}`);
  };
  try {
    await expect(null, [220]);
    await expect('EHLO shutterbus', [250]);
    if (url.username) {
      const credentials = Buffer.from(`\0${decodeURIComponent(url.username)}\0${decodeURIComponent(url.password)}`).toString('base64');
      await expect(`AUTH PLAIN ${credentials}`, [235]);
    }
    await expect(`MAIL FROM:<${address(message.from)}>`, [250]);
    await expect(`RCPT TO:<${address(message.to)}>`, [250, 251]);
    await expect('DATA', [354]);
    await expect(`${formatMessage(message)}\r\n.`, [250]);
    await expect('QUIT', [221]).catch(() => undefined);
  } finally {
    socket.destroy();
  }
}

/** The bare address of `Name <a@b>` or `a@b`; refuses line breaks, which would inject commands. */
function address(value: string): string {
  const bare = /<([^>]*)>/.exec(value)?.[1] ?? value;
  if (/[\r\n<>]/.test(bare)) throw new Error('address not valid');
  return bare.trim();
}

function formatMessage(message: MailMessage): string {
  const header = (value: string) => value.replace(/[\r\n]+/g, ' ');
  const subject = /^[\x20-\x7e]*$/.test(message.subject) ? header(message.subject) : `=?UTF-8?B?${Buffer.from(message.subject).toString('base64')}?=`;
  const lines = [
    `From: ${header(message.from)}`,
    `To: ${header(message.to)}`,
    `Subject: ${subject}`,
    `Date: ${new Date().toUTCString()}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
    '',
    // Dot-stuffing: a line starting with "." would otherwise end the message early.
    ...message.text.replace(/\r?\n/g, '\r\n').split('\r\n').map((line) => (line.startsWith('.') ? `.${line}` : line)),
  ];
  return lines.join('\r\n');
}
