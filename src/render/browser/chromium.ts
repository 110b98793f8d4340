// The Chromium process: the switches it is launched with, and finding it among the machine's processes.

import { listProcesses } from './processes.ts';

// Playwright disables these Chromium features with its own --disable-features switch
// (playwright-core's chromiumSwitches.ts). A second switch replaces the first, so ours repeats
// the list; test/render/chromium.test.ts fails when a Playwright upgrade adds to it.
const PLAYWRIGHT_DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
];

// RenderDocument gives every cross-document navigation a new frame host; without it a warm page's
// navigations (the render's, and the wipe's about:blank) cost ≈ 20% less browser CPU.
// WebUIOmniboxPopup and WebUIOmniboxAimPopup preload the address bar's pop-ups (chrome:// pages a
// headless browser never shows) in a renderer of their own once the first page opens: ≈ 55 MB
// for nothing. Pages' renderers are not touched: each context keeps its own.
// SpareRendererForSitePerProcess keeps a spare renderer launched for the browser context that
// navigated last; warm pages never need one (each keeps its renderer), and with renders alternating
// between contexts every navigation threw the spare away and launched another: two processes
// started and killed per render at two renders at once, ≈ 15% of the browser's CPU per shot.
const DISABLED_FEATURES = [
  ...PLAYWRIGHT_DISABLED_FEATURES,
  'RenderDocument',
  'WebUIOmniboxPopup',
  'WebUIOmniboxAimPopup',
  'SpareRendererForSitePerProcess',
];

// The browser's own requests, made whatever page it shows: the component updater still installs
// some components on demand (the on-device models manifest, update.googleapis.com) despite
// --disable-component-update, and account sign-in asks accounts.google.com three times in the
// first five seconds. Both are sent to the discard port on loopback, where nothing answers, so a
// start never reaches Google through the egress proxy (test/render/chromium.test.ts).
const NOWHERE = 'http://127.0.0.1:9/';

const FLAGS = [
  // Every site in a renderer of its own, as Chrome does by default; the headless shell does not.
  '--site-per-process',
  `--disable-features=${DISABLED_FEATURES.join(',')}`,
  `--component-updater=url-source=${NOWHERE}`,
  `--gaia-url=${NOWHERE}`,
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--disable-dev-shm-usage',
];

/**
 * Launch switches; with `proxyServer`, every request (loopback included) goes through that proxy;
 * with `heapMb`, no renderer's JavaScript heap grows past that many MB (its renderer then crashes).
 */
export function chromiumArgs(proxyServer?: string, heapMb?: number): string[] {
  const proxyArgs = proxyServer ? [`--proxy-server=${proxyServer}`, '--proxy-bypass-list=<-loopback>'] : [];
  const heapArgs = heapMb ? [`--js-flags=--max-old-space-size=${heapMb}`] : [];
  return [...proxyArgs, ...heapArgs, ...FLAGS];
}

/** The pid of the browser process (not one of its children) whose command line holds `arg`; null without /proc. */
export function findProcessWithArg(arg: string): number | null {
  return (
    listProcesses().find(({ argv }) => argv.includes(arg) && !argv.some((a) => a.startsWith('--type=')))?.pid ?? null
  );
}
