// Flag parsing for the operator CLI: `--name value` pairs and bare `--switch`es after the command words.

/** A mistake in how the CLI was called: printed with the usage, exit code 2. */
export class UsageError extends Error {}

/** Parsed command line: the command words and the flags. */
export interface Parsed {
  words: string[];
  flags: Map<string, string | true>;
}

/** Splits argv into command words and `--flag [value]` pairs. */
export function parseArgs(argv: string[]): Parsed {
  const words: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      words.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
    if (inline !== undefined) flags.set(name, inline);
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) flags.set(name, argv[++i]);
    else flags.set(name, true);
  }
  return { words, flags };
}

/** A flag that must be given with a value. */
export function required(parsed: Parsed, name: string): string {
  const value = parsed.flags.get(name);
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** A flag that may be given with a value. */
export function optional(parsed: Parsed, name: string): string | undefined {
  const value = parsed.flags.get(name);
  if (value === true) throw new UsageError(`--${name} needs a value`);
  return value;
}

/** A flag that must be one of `choices`. */
export function choice<T extends string>(parsed: Parsed, name: string, choices: readonly T[], fallback?: T): T {
  const value = parsed.flags.get(name) ?? fallback;
  if (typeof value !== 'string' || !choices.includes(value as T)) {
    throw new UsageError(`--${name} must be one of ${choices.join(', ')}`);
  }
  return value as T;
}

/** Refuses flags the command does not know. */
export function onlyFlags(parsed: Parsed, known: string[]): void {
  for (const name of parsed.flags.keys()) {
    if (!known.includes(name)) throw new UsageError(`unknown flag --${name}`);
  }
}
