// `shutterbus mail outbox`: the mail the dashboard wrote to the outbox because SMTP_URL is unset.
import type { Topology } from '../jetstream/topology.ts';
import { Outbox } from '../mail/outbox.ts';
import { asGiven, command } from './args.ts';

/** The mail commands, keyed by their command words. */
export const mailCommands = {
  'mail outbox': command(
    {},
    asGiven,
    async (_flags, { topology }: { topology: Topology }) => ({ messages: await new Outbox(topology.jsm).list() }),
    { readOnly: true },
  ),
};
