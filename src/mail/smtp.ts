// The SMTP path of outgoing mail, through nodemailer: it speaks the protocol (STARTTLS, AUTH,
// dot-stuffing) and builds the message (Message-ID, Date, encodings that keep lines short).
// nodemailer is loaded by the first send: most processes never mail, and loading it costs a
// start ≈ 35 ms of CPU and ≈ 4 MB.
import type { Transporter } from 'nodemailer';

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
  let transport: Promise<Transporter> | undefined;
  return async ({ from, to, subject, text }) => {
    transport ??= import('nodemailer').then(({ createTransport }) => createTransport({ url: smtpUrl, ...TIMEOUTS_MS }));
    return (await (await transport).sendMail({ from, to, subject, text })).messageId;
  };
}
