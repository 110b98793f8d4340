// Outgoing mail: through SMTP when SMTP_URL is set, otherwise to the log and the outbox stream.
import type { Logger } from '../log.ts';
import type { Outbox } from './outbox.ts';
import { smtpSender } from './smtp.ts';

/** Sends the dashboard's plain-text mail. */
export interface Mailer {
  send(message: { to: string; subject: string; text: string }): Promise<void>;
}

/** The mailer the configuration asks for. */
export function createMailer(options: {
  smtpUrl?: string;
  from: string;
  outbox: Outbox;
  log: Pick<Logger, 'info'>;
}): Mailer {
  const { smtpUrl, from, outbox, log } = options;
  const sendSmtp = smtpUrl ? smtpSender(smtpUrl) : null;
  return {
    async send(message) {
      if (sendSmtp) {
        const messageId = await sendSmtp({ from, ...message });
        log.info({ to: message.to, subject: message.subject, message_id: messageId }, 'mail sent');
        return;
      }
      // No SMTP: development and tests read the link with `shutterbus mail outbox`; the log names
      // the message only, since its link is as good as a password.
      await outbox.append({ ...message, created_at: new Date().toISOString() });
      log.info(
        { to: message.to, subject: message.subject },
        'mail written to the outbox (SMTP_URL is not set): npx shutterbus mail outbox shows it',
      );
    },
  };
}
