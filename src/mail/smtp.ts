// The SMTP path of outgoing mail, through nodemailer: it speaks the protocol (STARTTLS, AUTH,
// dot-stuffing) and builds the message (Message-ID, Date, encodings that keep lines short).
import { createTransport } from 'nodemailer';

/** One plain-text message. */
export interface MailMessage {
  from: string;
  to: string;
  subject: string;
  text: string;
}

// nodemailer's defaults (2 min to connect, 30 s for the greeting, 10 min of silence) would hold
// a sign-up for minutes on a dead server; these fail the send in seconds.
const TIMEOUTS_MS = { connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 15_000 };

/**
 * Sends mail to `smtp://[user:pass@]host[:port]` (STARTTLS whenever the server offers it) or
 * `smtps://…` (TLS from the first byte), one connection per message; credentials come from the URL.
 * Each send resolves to the message's Message-ID once the server has accepted it.
 */
export function smtpSender(smtpUrl: string): (message: MailMessage) => Promise<string> {
  const transport = createTransport({ url: smtpUrl, ...TIMEOUTS_MS });
  return async ({ from, to, subject, text }) => (await transport.sendMail({ from, to, subject, text })).messageId;
}
