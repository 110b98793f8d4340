// `shutterbus mail outbox`: the mail the dashboard wrote to the outbox because SMTP_URL is unset.
import type { Topology } from '../jetstream/topology.ts';
import { Outbox } from '../mail/outbox.ts';
import type { Sealer } from '../secrets/sealer.ts';
import { asGiven, command } from './args.ts';

/** The mail commands, keyed by their command words. */
export const mailCommands = {
  'mail outbox': command(
    {},
    asGiven,
    async (_flags, { topology, sealer }: { topology: Topology; sealer: Sealer }) => ({
      messages: await new Outbox(topology.jsm, sealer).list(),
    }),
    { readOnly: true },
  ),
};
