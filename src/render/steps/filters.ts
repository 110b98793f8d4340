// The blocking rules: AdGuard's filter lists as installed by npm (@adguard/dnr-rulesets keeps
// each list's original text beside its declarative rules), compiled into @ghostery/adblocker
// engines, one per rule set, once per process, each compiled in a child process. A compiled engine
// is cached on disk under os.tmpdir(), keyed by the packages' versions, so a process after the
// first loads it in milliseconds instead of compiling for a second or more. Nothing is downloaded.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config, FiltersEngine } from '@ghostery/adblocker';
import { inPageSource } from '../browser/in-page.ts';

/** A group of rules a blocking option switches on. */
export type RuleSet = 'ads' | 'trackers' | 'socials' | 'chats' | 'cookies' | 'popups';

/** Where a rule set's rules come from, and which kinds of them it uses. */
interface RuleSetSource {
  /** AdGuard filter ids (the ruleset_<id> folders of @adguard/dnr-rulesets). */
  lists: number[];
  /** Requests matching its network rules are never made. */
  network: boolean;
  /** Its element-hiding rules hide what they match. */
  cosmetic: boolean;
  /** Rules of our own in the same syntax, where the lists leave a gap the documentation names. */
  own?: string[];
}

// The AdGuard Widgets filter blocks Intercom, Zendesk, HubSpot and LiveChat only on a few sites
// (their support chats double as sign-in help there); docs/blocking.md names them, so these vendors'
// widget hosts and launchers are added as rules of our own.
const CHAT_VENDORS = [
  '||widget.intercom.io^$third-party',
  '||js.intercomcdn.com^$third-party',
  '||api-iam.intercom.io^$third-party',
  '||static.zdassets.com/ekr/snippet.js',
  '||ekr.zdassets.com^$third-party',
  '||widget-mediator.zopim.com^$third-party',
  '||js.usemessages.com^$third-party',
  '||app.hubspot.com/conversations-visitor',
  '||cdn.livechatinc.com^$third-party',
  '||js.driftt.com^$third-party',
  '||client.crisp.chat^$third-party',
  '||embed.tawk.to^$third-party',
  '##.intercom-lightweight-app',
  '###intercom-container',
  '###hubspot-messages-iframe-container',
  '###launcher[title*="Zendesk"]',
  '###drift-frame-controller',
  '###drift-frame-chat',
  '##.crisp-client',
  '###tidio-chat',
  '###chat-widget-container',
];

// The Social Media filter misses the widget scripts of X/Twitter, Facebook's SDK, Instagram and
// TikTok (it has LinkedIn's and Pinterest's): these scripts, and the buttons and unrendered embeds
// they would have filled, are rules of our own.
const SOCIAL_WIDGETS = [
  '||platform.twitter.com^$third-party',
  '||platform.x.com^$third-party',
  '||syndication.twitter.com^$third-party',
  '||cdn.syndication.twimg.com^$third-party',
  '||connect.facebook.net^$third-party',
  '||facebook.com^*/plugins/$third-party',
  '||platform.linkedin.com^$third-party',
  '||assets.pinterest.com^*/js/$third-party',
  '||widgets.pinterest.com^$third-party',
  '||instagram.com^*/embed$third-party',
  '||instagram.com/embed.js$third-party',
  '||tiktok.com^*/embed$third-party',
  '||tiktok.com/embed.js$third-party',
  '##.twitter-tweet',
  '##.twitter-timeline',
  '##.twitter-share-button',
  '##.twitter-follow-button',
  '##.twitter-hashtag-button',
  '##.twitter-mention-button',
  '##.fb-like',
  '##.fb-share-button',
  '##.fb-page',
  '##.fb-post',
  '##.fb-video',
  '##.fb-comments',
  '##.fb-follow',
  '##.fb-send',
  '##.instagram-media',
  '##.tiktok-embed',
  '##.IN-widget',
  '##script[type="IN/Share"]',
];

// AdGuard Base leaves Taboola's loader and its thumbnails (it blocks only trc.taboola.com's
// requests), so a page's "around the web" block would still fill: its hosts and containers are
// rules of our own.
const NATIVE_ADS = ['||taboola.com^$third-party', '##div[id^="taboola-"]', '##.trc_related_container'];

/** Each rule set's sources (AdGuard filter ids: 2 Base, 11 Mobile Ads, 3 Tracking Protection,
 * 4 Social Media, 22 Widgets, 18 Cookie Notices, 19 Popups, 20 Mobile App Banners, 21 Other Annoyances). */
export const RULE_SETS: Record<RuleSet, RuleSetSource> = {
  ads: { lists: [2, 11], network: true, cosmetic: true, own: NATIVE_ADS },
  trackers: { lists: [3], network: true, cosmetic: false },
  socials: { lists: [4], network: true, cosmetic: true, own: SOCIAL_WIDGETS },
  chats: { lists: [22], network: true, cosmetic: true, own: CHAT_VENDORS },
  // Cosmetic only: blocking a consent platform's script leaves a site that waits for an answer in
  // its no-answer state; autoconsent answers the banner instead (src/render/steps/consent.ts), and these
  // rules hide the banners it has no rule for.
  cookies: { lists: [18], network: false, cosmetic: true },
  popups: { lists: [19, 20, 21], network: true, cosmetic: true },
};

const engines = new Map<RuleSet, Promise<FiltersEngine>>();

/** The engine of `name`, compiled (or read from the disk cache) on first use and kept for the process's life. */
export function ruleEngine(name: RuleSet): Promise<FiltersEngine> {
  let engine = engines.get(name);
  if (!engine) {
    engine = loadEngine(name);
    engines.set(name, engine);
    // A failure is not kept: the next render tries again.
    engine.catch(() => engines.delete(name));
  }
  return engine;
}

/** The engines of `names`, in that order. */
export function ruleEngines(names: Iterable<RuleSet>): Promise<FiltersEngine[]> {
  return Promise.all([...names].map(ruleEngine));
}

/**
 * The adblocker library, loaded on the first render that blocks: a process that never blocks
 * spares its memory (≈ 15 MB) and its load time at start.
 */
export function adblocker(): Promise<typeof import('@ghostery/adblocker')> {
  return (library ??= import('@ghostery/adblocker'));
}
let library: Promise<typeof import('@ghostery/adblocker')> | undefined;

async function loadEngine(name: RuleSet): Promise<FiltersEngine> {
  const file = cacheFile(name);
  const { FiltersEngine } = await adblocker();
  try {
    if (ownPrivateDirectory(path.dirname(file))) return FiltersEngine.deserialize(readFileSync(file));
  } catch {
    // Not cached yet, or written by another version: compiled below.
  }
  const compiled = await compileRuleSet(name);
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    if (ownPrivateDirectory(path.dirname(file))) {
      const temporary = `${file}.${process.pid}.tmp`;
      writeFileSync(temporary, compiled);
      renameSync(temporary, file);
    }
  } catch {
    // A read-only temporary directory costs the next process a compile, nothing else.
  }
  return FiltersEngine.deserialize(compiled);
}

/**
 * Rule set `name` compiled from the installed lists and serialized (what a cache miss costs). The
 * compile runs in a child Node process: engines parsed from the lists hold their filters as
 * objects for as long as they live (ads alone ≈ 170 MB of heap, all six ≈ 400 MB), where the same
 * engines loaded serialized hold a few MB each, and parsing takes a thread for a second or more.
 * Only the serialized engine comes back. The child gets no environment: it needs none, and so
 * sees no secret and runs no NODE_OPTIONS preload. One compile runs at a time: a child peaks at
 * ≈ 300 MB (ads), all six at once at ≈ 750 MB, for ≈ 1 s less of a machine's first blocking
 * render (all six ≈ 3.6 s one after another, ≈ 2.6 s at once on two CPUs).
 */
export function compileRuleSet(name: RuleSet): Promise<Uint8Array> {
  const compiled = compiling.then(() => compileInChildProcess(name));
  compiling = compiled.catch(() => undefined);
  return compiled;
}
let compiling: Promise<unknown> = Promise.resolve();

async function compileInChildProcess(name: RuleSet): Promise<Uint8Array> {
  const source = RULE_SETS[name];
  const input: CompileInput = {
    library: import.meta.resolve('@ghostery/adblocker'),
    files: source.lists.map((id) =>
      path.join(dnrDirectory(), 'dist', 'filters', 'declarative', `ruleset_${id}`, `ruleset_${id}.json`),
    ),
    own: source.own ?? [],
    loopbackExceptions: { source: LOOPBACK_EXCEPTIONS.source, flags: LOOPBACK_EXCEPTIONS.flags },
    config: {
      loadNetworkFilters: source.network,
      loadCosmeticFilters: source.cosmetic,
      loadExtendedSelectors: false,
      enableHtmlFiltering: false,
      loadCSPFilters: false,
    },
  };
  const child = spawn(process.execPath, ['--input-type=module', '-e', inPageSource(compileInChild, input)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {},
    // A compile takes seconds; one that hangs is killed, so the compiles queued behind it still run.
    timeout: 120_000,
  });
  const output: Buffer[] = [];
  const errors: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => errors.push(chunk));
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  if (code !== 0) {
    const ended = signal ? `killed by ${signal}` : `exit ${code}`;
    throw new Error(`compiling the ${name} rules failed (${ended}): ${Buffer.concat(errors).toString().trim()}`);
  }
  return new Uint8Array(Buffer.concat(output));
}

/** What the child process that compiles a rule set is given. */
interface CompileInput {
  /** The adblocker library's entry, as a file URL. */
  library: string;
  /** The @adguard/dnr-rulesets files holding the lists' text. */
  files: string[];
  own: string[];
  /** LOOPBACK_EXCEPTIONS, as the parts a RegExp is built from again. */
  loopbackExceptions: { source: string; flags: string };
  config: Partial<Config>;
}

/**
 * Runs in the child process compileRuleSet starts, handed over as source (it uses nothing of this
 * module): reads the lists, parses them into an engine and writes it serialized to stdout.
 */
async function compileInChild(input: CompileInput): Promise<void> {
  const { readFileSync } = process.getBuiltinModule('node:fs');
  // The original text of an AdGuard filter as @adguard/dnr-rulesets ships it: the first rule of
  // each declarative ruleset carries it in its metadata (`rawFilterList`). Only that string is
  // parsed, not the tens of thousands of declarative rules around it.
  const rawFilterList = (file: string): string => {
    const json = readFileSync(file, 'utf8');
    const key = '"rawFilterList":"';
    const start = json.indexOf(key);
    if (start < 0) throw new Error(`${file} has no rawFilterList`);
    let end = start + key.length;
    // The closing quote is the first one not escaped by a backslash.
    for (;;) {
      end = json.indexOf('"', end);
      if (end < 0) throw new Error(`${file}: unterminated rawFilterList`);
      let backslashes = 0;
      while (json[end - 1 - backslashes] === '\\') backslashes += 1;
      if (backslashes % 2 === 0) break;
      end += 1;
    }
    return JSON.parse(json.slice(start + key.length - 1, end + 1)) as string;
  };
  const texts = [...input.files.map(rawFilterList), input.own.join('\n')];
  // The lists have CRLF line ends; a selector ending in a carriage return would be dropped as invalid.
  const rules = texts
    .join('\n')
    .replace(/\r/g, '')
    .replace(new RegExp(input.loopbackExceptions.source, input.loopbackExceptions.flags), '');
  const { FiltersEngine } = (await import(input.library)) as typeof import('@ghostery/adblocker');
  const compiled = FiltersEngine.parse(rules, input.config).serialize();
  await new Promise<void>((resolve, reject) =>
    process.stdout.write(compiled, (err) => (err ? reject(err) : resolve())),
  );
}

// AdGuard Base turns element hiding off on 127.0.0.1 and localhost (`@@://localhost/$generichide`),
// for its users' own development servers. Here a loopback page is a test's or a local fixture's
// (ALLOW_PRIVATE_TARGETS), and should be blocked as the same page on any other host would be.
const LOOPBACK_EXCEPTIONS = /^@@:\/\/(?:127\.0\.0\.1|localhost)(?:[/:][^\n$]*)?\$generichide$/gm;

// The installed packages' folders.
const dnrDirectory = () =>
  path.resolve(path.dirname(fileURLToPath(import.meta.resolve('@adguard/dnr-rulesets'))), '..', '..');
const ghosteryDirectory = () =>
  path.resolve(path.dirname(fileURLToPath(import.meta.resolve('@ghostery/adblocker'))), '..', '..');

const versionOf = (directory: string) =>
  (JSON.parse(readFileSync(path.join(directory, 'package.json'), 'utf8')) as { version: string }).version;

// Changed whenever this file changes what it compiles from the same lists.
const COMPILE_FORMAT = 3;

// The cache is trusted only in a directory of this user's that nobody else can write to: another
// local user must not be able to plant rules in a shared temporary directory.
function ownPrivateDirectory(directory: string): boolean {
  const stat = statSync(directory);
  return stat.isDirectory() && stat.uid === process.getuid?.() && (stat.mode & 0o022) === 0;
}

// One file per rule set, its name changing with either package's version, the rule set's sources or COMPILE_FORMAT.
function cacheFile(name: RuleSet): string {
  const key = createHash('sha256')
    .update(
      JSON.stringify([COMPILE_FORMAT, versionOf(dnrDirectory()), versionOf(ghosteryDirectory()), RULE_SETS[name]]),
    )
    .digest('hex')
    .slice(0, 16);
  return path.join(os.tmpdir(), `shutterbus-filters-${process.getuid?.() ?? 'user'}`, `${name}-${key}.bin`);
}
