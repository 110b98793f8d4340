// Per-render blocking on a warm page (docs/blocking.md): ads, trackers, social and chat widgets never
// loaded; consent banners answered or hidden; overlays hidden; block_requests and block_resources.
//
// Nothing here runs for a render that asks for none of it. Otherwise everything goes through one
// CDP session of its own, opened before navigation and detached by the undo, which ends its
// request interception, its scripts for new documents and its binding at once; what it did to
// the document (a style element, hidden overlays) goes with the document, which the pool replaces
// before the page serves again. Requests are stopped in the browser's network stack through the
// CDP Fetch domain (only the requests its patterns name pause: every one for the filter lists,
// one pattern per block_requests entry or block_resources type otherwise); a stopped request
// fails with net::ERR_BLOCKED_BY_CLIENT, which the failure rules never count as failed. The
// header interception of request-settings.ts has a Fetch session of its own: both apply.

import type { Page } from 'playwright-core';
import type { Protocol } from 'playwright-core/types/protocol';
import type { FiltersEngine, Request } from '@ghostery/adblocker';
import type { RenderOptions } from '../../domain/options.ts';
import { wildcardPattern } from '../../domain/judgement.ts';
import { CONSENT_BINDING, consentScript, watchConsent } from './consent.ts';
import { adblocker, RULE_SETS, ruleEngines, type RuleSet } from './filters.ts';
import { type Cdp, type CdpEvent, openCdp } from '../browser/cdp.ts';
import { inPage, inPageSource } from '../browser/in-page.ts';
import { collectFeatures, hideOverlays, refuseWebSockets } from '../in-page/blocking.ts';
import type { Progress } from '../browser/progress.ts';
import { untilAborted } from './page.ts';
import type { PageStep } from './page-step.ts';

/** A render's blocking: the step that readies the loaded page for capture. */
export interface Blocking {
  /** Waits (bounded) for consent banners to be answered, then hides what the rules and heuristics hide. */
  beforeCapture(progress: Progress): Promise<void>;
}

const NO_BLOCKING: Blocking = { beforeCapture: async () => {} };

// CDP's Fetch.requestPaused, the parts used here (a frame's own session sends it as JSON).
type PausedRequest = Pick<CdpEvent<'Fetch.requestPaused'>, 'requestId' | 'resourceType' | 'frameId'> & {
  request: { url: string };
};

// block_resources names → CDP resource types.
const RESOURCE_TYPES: Record<string, Protocol.Network.ResourceType[]> = {
  // The page's own document is never blocked (below): `document` stops its frames.
  document: ['Document'],
  stylesheet: ['Stylesheet'],
  image: ['Image'],
  media: ['Media'],
  font: ['Font'],
  script: ['Script'],
  texttrack: ['TextTrack'],
  xhr: ['XHR'],
  fetch: ['Fetch'],
  eventsource: ['EventSource'],
  websocket: [],
  manifest: ['Manifest'],
  other: ['Other', 'Ping', 'CSPViolationReport', 'Prefetch', 'SignedExchange'],
};

/** What `options` asks to block, as rule sets and patterns. */
export function blockingPlan(options: RenderOptions) {
  const annoyances = options.block_annoyances;
  const ruleSets = new Set<RuleSet>();
  if (options.block_ads) ruleSets.add('ads');
  if (options.block_trackers) ruleSets.add('trackers');
  if (options.block_socials || annoyances) ruleSets.add('socials');
  if (options.block_chats || annoyances) ruleSets.add('chats');
  if (options.block_cookie_banners || annoyances) ruleSets.add('cookies');
  if (options.block_banners_by_heuristics || annoyances) ruleSets.add('popups');
  return {
    ruleSets,
    consent: options.block_cookie_banners || annoyances,
    heuristics: options.block_banners_by_heuristics || annoyances,
    requestPatterns: options.block_requests,
    resourceTypes: new Set(options.block_resources.flatMap((name) => RESOURCE_TYPES[name] ?? [])),
  };
}

/**
 * Sets up the blocking `options` asks for before navigation, deferring to `progress` the undo that
 * ends it before the warm page serves again; `beforeCapture` runs after the page's own actions,
 * before the capture.
 */
export async function applyBlocking({ page, options, progress }: PageStep): Promise<Blocking> {
  const deadline = progress.signal;
  const plan = blockingPlan(options);
  if (plan.ruleSets.size === 0 && plan.requestPatterns.length === 0 && options.block_resources.length === 0)
    return NO_BLOCKING;

  // Compiled once per process (or read from the disk cache); a render waits only the first time.
  const engines = await untilAborted(deadline, ruleEngines(plan.ruleSets));
  const named = new Map([...plan.ruleSets].map((name, i) => [name, engines[i]]));
  const networkEngines = [...named].filter(([name]) => RULE_SETS[name].network).map(([, engine]) => engine);
  const cosmeticEngines = [...named].filter(([name]) => RULE_SETS[name].cosmetic).map(([, engine]) => engine);

  const session = await progress.race(openCdp(page));
  const consent = plan.consent ? watchConsent(session) : undefined;
  let stopIntercepting: (() => void) | undefined;
  // Blocked frames and images, whose elements are collapsed before the capture (an error page or a
  // broken-image icon would show in their place), and the slots of blocked ad scripts.
  const collapse = new Set<string>();
  const slots = new Set<string>();
  progress.defer(async () => {
    consent?.stop();
    stopIntercepting?.();
    // Detaching ends the interception (paused requests go on), the scripts and the binding.
    await session.detach().catch(() => {});
  });
  if (networkEngines.length > 0 || plan.requestPatterns.length > 0 || plan.resourceTypes.size > 0) {
    stopIntercepting = await interceptRequests(session, plan, networkEngines, { collapse, slots }, deadline);
  }
  // The Fetch domain never sees WebSockets: their constructor refuses instead, in every document.
  if (options.block_resources.includes('websocket')) {
    await progress.race(
      Promise.all([
        session.Page.enable(),
        session.Page.addScriptToEvaluateOnNewDocument({ source: inPageSource(refuseWebSockets) }),
      ]),
    );
  }
  if (consent) {
    await progress.race(
      Promise.all([
        // The script for new documents needs the Page domain, the binding's calls the Runtime domain.
        session.Page.enable(),
        session.Runtime.enable(),
        session.Runtime.addBinding({ name: CONSENT_BINDING }),
        session.Page.addScriptToEvaluateOnNewDocument({ source: consentScript() }),
      ]),
    );
  }
  return {
    async beforeCapture(progress) {
      if (consent) await progress.race(consent.settled(progress.timeLeft()));
      if (cosmeticEngines.length > 0 || plan.heuristics || collapse.size > 0 || slots.size > 0) {
        await hideOnPage(
          page,
          cosmeticEngines,
          { heuristics: plan.heuristics, collapse: [...collapse].slice(0, 500), slots: [...slots] },
          progress.signal,
        );
      }
    },
  };
}

// Ad scripts whose slots stay on the page as empty boxes of the ad's size once the script is blocked
// (AdGuard answers them with a stand-in that collapses the slots instead, which a blocked request
// cannot do; its own rule hiding them is generic, off on the sites a list exempts with
// `$generichide`): script → slot.
const SLOT_SCRIPTS: Array<[RegExp, string]> = [[/\/adsbygoogle\.js(\?|$)/, 'ins.adsbygoogle']];

/** Stops the requests the plan blocks, on `session` and the page's cross-site frames; returns what removes its listeners. */
async function interceptRequests(
  session: Cdp,
  plan: ReturnType<typeof blockingPlan>,
  engines: FiltersEngine[],
  hide: { collapse: Set<string>; slots: Set<string> },
  deadline: AbortSignal,
) {
  const { collapse, slots } = hide;
  const { frameTree } = await untilAborted(deadline, session.Page.getFrameTree());
  const mainFrameId = frameTree.frame.id;
  const requestPatterns = plan.requestPatterns.map(wildcardPattern);
  // Loaded already when there are engines (they come from it); a render with patterns alone never needs it.
  const { Request } = engines.length > 0 ? await adblocker() : { Request: undefined };
  // The page's own URL, for the lists' first- and third-party rules: the last main document asked for.
  let documentUrl = frameTree.frame.url;
  const blocked = (event: PausedRequest): boolean => {
    const { url } = event.request;
    const document = event.resourceType === 'Document';
    // The page asked for is never blocked, only what it loads.
    if (document && event.frameId === mainFrameId) {
      documentUrl = url;
      return false;
    }
    if (plan.resourceTypes.has(event.resourceType)) return true;
    if (requestPatterns.some((pattern) => pattern.test(url))) return true;
    if (!Request) return false;
    const request = Request.fromRawDetails({
      url,
      sourceUrl: documentUrl,
      type: document ? 'sub_frame' : ghosteryType(event.resourceType),
    });
    return engines.some((engine) => engine.match(request).match);
  };
  // Answers one paused request through `fetch`: the page's session's Fetch domain, or a frame's (below).
  const answer = (event: PausedRequest, fetch: FetchReplies) => {
    const block = blocked(event);
    if (block && COLLAPSED_TYPES.has(event.resourceType)) collapse.add(event.request.url);
    if (block && event.resourceType === 'Script') {
      for (const [script, slot] of SLOT_SCRIPTS) if (script.test(event.request.url)) slots.add(slot);
    }
    const reply = block
      ? fetch.failRequest({ requestId: event.requestId, errorReason: 'BlockedByClient' })
      : fetch.continueRequest({ requestId: event.requestId });
    // A request the page has given up on meanwhile cannot be answered: nothing to do about it.
    reply.catch(() => {});
  };
  const onPaused = (event: CdpEvent<'Fetch.requestPaused'>) => answer(event, session.Fetch);
  // With the lists every request is looked at; otherwise only those the patterns name pause.
  const patterns =
    engines.length > 0
      ? [{ urlPattern: '*' }]
      : [
          ...plan.requestPatterns.map((pattern) => ({ urlPattern: pattern.replace(/\\/g, '\\\\') })),
          ...[...plan.resourceTypes].map((resourceType) => ({ urlPattern: '*', resourceType })),
        ];

  // A cross-site frame runs in a target of its own, whose requests the page's Fetch never sees.
  // This session attaches to each such target as it starts (paused until resumed), enables the
  // same interception there and resumes it, so a frame's own requests are judged like the page's.
  // Playwright's sessions cannot address flattened child sessions: the messages go through
  // Target.sendMessageToTarget. A target that is no frame (a worker) is only resumed.
  let messageId = 0;
  const toTarget = (sessionId: string) => {
    const send = (method: string, params: object = {}) =>
      session.Target.sendMessageToTarget({ sessionId, message: JSON.stringify({ id: ++messageId, method, params }) });
    const replies: FetchReplies = {
      failRequest: (params) => send('Fetch.failRequest', params),
      continueRequest: (params) => send('Fetch.continueRequest', params),
    };
    return { send, replies };
  };
  const onAttached = (event: CdpEvent<'Target.attachedToTarget'>) => {
    const { send } = toTarget(event.sessionId);
    const intercepting = event.targetInfo.type === 'iframe' ? send('Fetch.enable', { patterns }) : Promise.resolve();
    // The target's messages are handled in order: the interception is on before it runs.
    void intercepting
      .catch(() => {})
      .then(() => (event.waitingForDebugger ? send('Runtime.runIfWaitingForDebugger') : undefined))
      .catch(() => {});
  };
  const onMessage = (event: CdpEvent<'Target.receivedMessageFromTarget'>) => {
    const message = JSON.parse(event.message) as { method?: string; params?: PausedRequest };
    if (message.method === 'Fetch.requestPaused' && message.params && event.sessionId)
      answer(message.params, toTarget(event.sessionId).replies);
  };
  session.on('Fetch.requestPaused', onPaused);
  session.on('Target.attachedToTarget', onAttached);
  session.on('Target.receivedMessageFromTarget', onMessage);
  const stop = () => {
    session.off('Fetch.requestPaused', onPaused);
    session.off('Target.attachedToTarget', onAttached);
    session.off('Target.receivedMessageFromTarget', onMessage);
  };
  await untilAborted(
    deadline,
    Promise.all([
      session.Fetch.enable({ patterns }),
      session.Target.setAutoAttach({ autoAttach: true, waitForDebuggerOnStart: true, flatten: false }),
    ]),
  );
  return stop;
}

// The two answers to a paused request, on the page's session or a frame's (Target.sendMessageToTarget).
type FetchReplies = {
  failRequest(params: Protocol.Fetch.failRequestParameters): Promise<unknown>;
  continueRequest(params: Protocol.Fetch.continueRequestParameters): Promise<unknown>;
};

// Resource types whose element shows something of its own when its request fails.
const COLLAPSED_TYPES = new Set(['Document', 'Image', 'Media']);

// A CDP resource type in the adblocker's words (it knows Puppeteer's, which are CDP's in lower case).
function ghosteryType(resourceType: string): Parameters<typeof Request.fromRawDetails>[0]['type'] {
  return resourceType.toLowerCase() as Parameters<typeof Request.fromRawDetails>[0]['type'];
}

/**
 * Hides what the lists' element-hiding rules match (one style element) and the elements of
 * blocked frames and images (`collapse`: their URLs) and the slots of blocked ad scripts, then, with `heuristics`,
 * fixed overlays: a fixed element covering 30% of the viewport or more, or a wide bar fixed to its
 * bottom edge (app banners), and a sticky one covering 60%; never one holding most of the page's
 * text (an application's own fixed layout). A scroll lock such overlays leave on the page is lifted.
 */
async function hideOnPage(
  page: Page,
  engines: FiltersEngine[],
  { heuristics, collapse, slots }: { heuristics: boolean; collapse: string[]; slots: string[] },
  deadline: AbortSignal,
): Promise<void> {
  let css = slots.map((selector) => `${selector} { display: none !important; }\n`).join('');
  if (engines.length > 0) {
    const features = await untilAborted(deadline, page.evaluate(inPage(collectFeatures)));
    const { Request } = await adblocker();
    const { hostname, domain } = Request.fromRawDetails({ url: features.url });
    for (const engine of engines) {
      const { styles } = engine.getCosmeticsFilters({
        url: features.url,
        hostname,
        domain,
        ids: features.ids,
        classes: features.classes,
        hrefs: features.hrefs,
        getBaseRules: true,
        getRulesFromDOM: true,
        getRulesFromHostname: true,
        getInjectionRules: false,
        getExtendedRules: false,
      });
      css += styles;
    }
  }
  await untilAborted(deadline, page.evaluate(inPage(hideOverlays), { css, heuristics, collapse }));
}
