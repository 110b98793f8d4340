// The operator CLI's command line: command words first, then the flags that command allows, read
// strictly by node:util parseArgs (unknown flags, missing values and stray words are usage errors).
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A mistake in how the CLI was called: printed with the usage, exit code 2. */
export class UsageError extends Error {}

/** The flags one command allows, as parseArgs option definitions. */
export type FlagSpec = NonNullable<ParseArgsConfig['options']>;

/** The values parseArgs reads for `F`: a string or boolean per given flag. */
export type FlagValues<F extends FlagSpec> = ReturnType<
  typeof parseArgs<{ options: F; strict: true; allowPositionals: false }>
>['values'];

/**
 * One CLI command: the flags it allows, `read` (pure: turns them into the arguments `run` takes, any
 * mistake a UsageError, called before NATS is connected to) and what it does with those arguments.
 */
export interface Command<Context> {
  flags: FlagSpec;
  read(flags: FlagValues<FlagSpec>): unknown;
  run(args: unknown, context: Context): Promise<unknown>;
  /** Only reads: run again when JetStream did not answer, where a write could be made twice. */
  readOnly: boolean;
}

/** A command whose `read` sees its own flags typed, and whose `run` gets what `read` returned. */
export function command<const F extends FlagSpec, A, Context>(
  flags: F,
  read: (flags: FlagValues<F>) => A,
  run: (args: A, context: Context) => Promise<unknown>,
  options: { readOnly?: boolean } = {},
): Command<Context> {
  return {
    flags,
    read: read as Command<Context>['read'],
    run: run as Command<Context>['run'],
    readOnly: options.readOnly ?? false,
  };
}

/** The `read` of a command with nothing to check: its flags as given. */
export const asGiven = <T>(flags: T): T => flags;

/** Reads the flags after the command words; any mistake parseArgs finds is a UsageError. */
export function parseFlags(args: string[], spec: FlagSpec): FlagValues<FlagSpec> {
  try {
    return parseArgs({ args, options: spec, strict: true, allowPositionals: false }).values;
  } catch (err) {
    if (
      typeof (err as { code?: unknown }).code === 'string' &&
      (err as { code: string }).code.startsWith('ERR_PARSE_ARGS_')
    ) {
      throw new UsageError((err as Error).message.replace(/\n/g, ' '));
    }
    throw err;
  }
}

/** A string flag that must be given, and not empty. */
export function required(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** A string flag that must be one of `choices`. */
export function choice<T extends string>(value: string | undefined, name: string, choices: readonly T[]): T {
  if (value === undefined || !choices.includes(value as T))
    throw new UsageError(`--${name} must be one of ${choices.join(', ')}`);
  return value as T;
}
