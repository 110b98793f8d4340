// `shutterbus mail outbox`: the mail the dashboard wrote to the outbox because SMTP_URL is unset.
import type { Topology } from '../jetstream/topology.ts';
import { Outbox } from '../mail/outbox.ts';
import { onlyFlags, type Parsed } from './args.ts';

/** The mail commands, keyed by their command words. */
export const mailCommands = {
  'mail outbox': async (parsed: Parsed, { topology }: { topology: Topology }) => {
    onlyFlags(parsed, []);
    return { messages: await new Outbox(topology.jsm).list() };
  },
};
