// `make bench`: Shutterbus end to end beside a raw Playwright loop on the same pages, and its HTTP
// answers beside a bare Fastify route, all in one run on this machine. Writes bench/results/latest.json.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { hmacHex } from '../src/signing.ts';
import { createWorkspace, spawnService, type TestStack } from '../test/helpers/service.ts';
import { freePort, startNats, startS3 } from '../test/helpers/stack.ts';
import { findProcess, hammer, loop, processTree, pssMb, type LoopResult } from './measure.ts';
import { AD_PAGE_HOSTS, startBenchSite } from './site.ts';
import { measureRules } from './blocking.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/lib/chromium/chromium';
const SHOTS = { count: 40, maxSeconds: 20 };
const HAMMER_SECONDS = 8;
const results: Record<string, unknown> = { machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model }, at: new Date().toISOString() };
const log = (line: string) => process.stderr.write(`${line}\n`);

const site = await startBenchSite();
const pages = { light: site.light, heavy: site.heavy };

// Baselines: the obvious loop (a fresh context per shot) and the browser's limit (one page reused).
log('baselines: raw Playwright');
const browser = await chromium.launch({ executablePath: CHROMIUM });
const rawShot = async (page: Page, url: string) => {
  await page.goto(url, { waitUntil: 'load' });
  await page.screenshot({ type: 'png' });
};
const baselineA: Record<string, LoopResult> = {};
const baselineB: Record<string, LoopResult> = {};
for (const [name, url] of Object.entries(pages)) {
  baselineA[name] = await loop(async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    await rawShot(await context.newPage(), url);
    await context.close();
  }, { concurrency: 1, ...SHOTS });
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  baselineB[name] = await loop(() => rawShot(page, url), { concurrency: 1, ...SHOTS });
  await context.close();
}
await browser.close();

// The stack: real NATS, the s3rver store, the service as a child process.
log('stack: nats, s3rver, shutterbus');
const [nats, s3] = await Promise.all([startNats(), startS3()]);
const stack: TestStack = {
  nats, s3, site: { url: site.light, hits: new Map(), received: [], close: site.close },
  env: {
    NATS_URL: nats.url, S3_ENDPOINT: s3.endpoint, S3_ACCESS_KEY: s3.accessKey, S3_SECRET_KEY: s3.secretKey,
    S3_BUCKET: 'shutterbus-bench', S3_REGION: 'us-east-1', ALLOW_PRIVATE_TARGETS: 'true', LOG_LEVEL: 'warn',
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'shutterbus-bench-')),
  },
  stop: async () => void (await Promise.allSettled([nats.stop(), s3.stop()])),
};
const workspace = await createWorkspace(stack, { plan: 'pro', quota: 1_000_000 });
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const startedAt = performance.now();
// The ad-heavy page's host names resolve to the bench site inside the service; any other name fails.
const service: ChildProcess = await spawnService(stack, {
  PORT: String(port), LOG_LEVEL: 'info',
  NODE_OPTIONS: `--import ${path.join(import.meta.dirname, 'local-names.mjs')}`,
  BENCH_LOCAL_NAMES: [...AD_PAGE_HOSTS, new URL(site.ads).hostname].join(','),
}, 'dist');
const take = async (url: string) => {
  const response = await fetch(`${base}/api/take?url=${encodeURIComponent(url)}`, { headers: { 'x-access-key': workspace.access_key } });
  const bytes = await response.arrayBuffer();
  if (response.status !== 200 || bytes.byteLength < 1000) throw new Error(`take answered ${response.status}`);
};
await take(site.light);
const firstShotSeconds = (performance.now() - startedAt) / 1000;
const stackPids = () => [
  ...processTree([service.pid!]),
  findProcess(['-p', String(nats.port)]),
  findProcess(['--port', String(s3.port)]),
].filter((pid): pid is number => pid !== null);
await new Promise((resolve) => setTimeout(resolve, 3000));
const idleMb = pssMb(stackPids());

// One render of `url` with `params` (repeated keys for a list); any 200 with a body counts.
const takeWith = async (url: string, params: Record<string, string>) => {
  const search = new URLSearchParams({ url, ...params });
  const response = await fetch(`${base}/api/take?${search}`, { headers: { 'x-access-key': workspace.access_key } });
  const bytes = await response.arrayBuffer();
  if (response.status !== 200 || bytes.byteLength === 0) throw new Error(`take answered ${response.status}: ${Buffer.from(bytes).toString().slice(0, 200)}`);
};
// The same idle stack once a render has loaded every rule engine (the light page, every switch on).
await takeWith(site.light, { block_ads: 'true', block_trackers: 'true', block_annoyances: 'true' });
await new Promise((resolve) => setTimeout(resolve, 3000));
const idleWithRulesMb = pssMb(stackPids());

// End to end through HTTP, JetStream, the actor and the bucket.
log('end to end: /api/take');
const e2e: Record<string, LoopResult> = {};
let loadMb = 0;
const sampler = setInterval(() => (loadMb = Math.max(loadMb, pssMb(stackPids()))), 500);
for (const concurrency of [1, 2, 4]) {
  e2e[`light_c${concurrency}`] = await loop(() => take(site.light), { concurrency, ...SHOTS, count: SHOTS.count * concurrency });
}
e2e.heavy_c1 = await loop(() => take(site.heavy), { concurrency: 1, ...SHOTS });
clearInterval(sampler);

// Blocking on the ad-heavy page, then the stack's idle memory with the rule engines loaded.
log('blocking: the ad-heavy page');
const takeBlocking = (params: Record<string, string>) => takeWith(site.ads, params);
const blockingOptions: Record<string, Record<string, string>> = {
  none: {},
  block_ads: { block_ads: 'true' },
  block_annoyances: { block_annoyances: 'true' },
  'block_ads + annoyances': { block_ads: 'true', block_annoyances: 'true' },
};
const blocking: Record<string, LoopResult> = {};
for (const [name, params] of Object.entries(blockingOptions)) {
  blocking[name] = await loop(() => takeBlocking(params), { concurrency: 1, count: 15, maxSeconds: 25 });
}
const rules = await measureRules();

// What each option family and each format costs on the light page, beside a plain png in the same loop.
log('options and formats: the light page');
const variantOptions: Record<string, Record<string, string>> = {
  'plain png': {},
  'emulation: dark, zone, ua, geo': { dark_mode: 'true', time_zone: 'Asia/Tokyo', user_agent: 'Mozilla/5.0 Bench', geolocation_latitude: '35.6', geolocation_longitude: '139.7' },
  'device iphone_13 (mobile, 3×)': { viewport_device: 'iphone_13' },
  'request: headers, cookies': { headers: 'X-Bench: 1', cookies: 'bench=1' },
  'page: styles, hide, scripts': { styles: 'h1 { color: teal }', hide_selectors: 'footer', scripts: 'document.title = "bench"' },
  'wait_until networkidle0': { wait_until: 'networkidle0' },
  'full_page (scroll on)': { full_page: 'true' },
  'metadata: title, og, icon, fonts': { metadata_page_title: 'true', metadata_open_graph: 'true', metadata_icon: 'true', metadata_fonts: 'true', response_type: 'json' },
  ...Object.fromEntries(['jpeg', 'webp', 'gif', 'avif', 'tiff', 'pdf', 'html', 'markdown'].map((format) => [`format ${format}`, { format }])),
};
const variants: Record<string, LoopResult> = {};
for (const [name, params] of Object.entries(variantOptions)) {
  variants[name] = await loop(() => takeWith(site.light, params), { concurrency: 1, count: 12, maxSeconds: 15 });
}

// HTTP: cached signed redirects and 401 rejections, beside a bare Fastify route in its own process.
log('http: autocannon');
const query = `access_key=${workspace.access_key}&url=${encodeURIComponent(site.light)}`;
const signedUrl = `${base}/api/take?${query}&signature=${hmacHex(workspace.secret_key, query)}`;
const firstView = await fetch(signedUrl, { redirect: 'manual' });
await firstView.arrayBuffer();
const secondView = await fetch(signedUrl, { redirect: 'manual' });
await secondView.arrayBuffer();
const bare = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'bare.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
const bareUrl = await new Promise<string>((resolve) => bare.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())));
const http = {
  bare: await hammer(`${bareUrl}/bare`, HAMMER_SECONDS),
  rejected: await hammer(`${base}/api/take?url=${encodeURIComponent(site.light)}`, HAMMER_SECONDS, { 'x-access-key': 'not-a-key' }),
  redirect: secondView.status === 302 ? await hammer(signedUrl, HAMMER_SECONDS) : null,
};
bare.kill('SIGTERM');
service.kill('SIGTERM');
await new Promise((resolve) => service.once('exit', resolve));
await stack.stop();
await site.close();

// The table: every figure beside its baseline, and the targets of issue 6.
const best = Object.entries(e2e).filter(([name]) => name.startsWith('light_')).sort((a, b) => b[1].perSecond - a[1].perSecond)[0];
const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
const row = (name: string, r: LoopResult) => `${name.padEnd(34)} ${r.perSecond.toFixed(2).padStart(8)} ${r.p50.toFixed(0).padStart(7)} ${r.p95.toFixed(0).padStart(7)} ${String(r.shots).padStart(6)}`;
const lines = [
  `Shutterbus benchmark — ${os.cpus().length} CPUs, ${results.at}`,
  '',
  `${'shots (1280×720 png)'.padEnd(34)} ${'shots/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'shots'.padStart(6)}`,
  ...Object.keys(pages).flatMap((name) => [row(`A raw, fresh context/shot (${name})`, baselineA[name]), row(`B raw, one page reused (${name})`, baselineB[name])]),
  ...Object.entries(e2e).map(([name, r]) => row(`Shutterbus /api/take ${name.replace('_c', ', c=')}`, r)),
  '',
  `${'ad-heavy page, c=1'.padEnd(34)} ${'shots/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'shots'.padStart(6)}`,
  ...Object.entries(blocking).map(([name, r]) => row(`Shutterbus ads, ${name}`, r)),
  `stack memory idle with the rule engines loaded: ${idleWithRulesMb.toFixed(0)} MB`,
  `rules (compile from the lists / load compiled / size): ${Object.entries(rules.sets).map(([name, set]) => `${name} ${set.compileMs} ms / ${set.loadMs} ms / ${set.compiledMb} MB`).join(', ')}`,
  `one request matched against every network rule set: ${rules.matchMicroseconds} µs`,
  '',
  `${'light page, c=1'.padEnd(34)} ${'shots/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'shots'.padStart(6)}  p50 ÷ plain png`,
  ...Object.entries(variants).map(([name, r]) => `${row(name, r)}  ${ratio(r.p50, variants['plain png'].p50).toFixed(2).padStart(6)}`),
  '',
  `${'http (autocannon, 10 connections)'.padEnd(34)} ${'req/s'.padStart(8)}  statuses`,
  `${'bare Fastify 302 route'.padEnd(34)} ${http.bare.perSecond.toFixed(0).padStart(8)}  ${JSON.stringify(http.bare.statuses)}`,
  `${'cached signed GET → 302'.padEnd(34)} ${(http.redirect?.perSecond.toFixed(0) ?? 'n/a').padStart(8)}  ${JSON.stringify(http.redirect?.statuses ?? {})}`,
  `${'bad access key → 401'.padEnd(34)} ${http.rejected.perSecond.toFixed(0).padStart(8)}  ${JSON.stringify(http.rejected.statuses)}`,
  '',
  `stack memory (PSS: service + Chromium + nats-server + s3rver): idle ${idleMb.toFixed(0)} MB, under load ${loadMb.toFixed(0)} MB`,
  `start → first screenshot: ${firstShotSeconds.toFixed(2)} s`,
  '',
  'targets',
];
const targets = {
  throughput_vs_A: { value: ratio(best[1].perSecond, baselineA.light.perSecond), goal: '≥ 2.0', met: best[1].perSecond / baselineA.light.perSecond >= 2, at: best[0] },
  p50_c1_vs_A: { value: ratio(e2e.light_c1.p50, baselineA.light.p50), goal: '≤ 0.75', met: e2e.light_c1.p50 / baselineA.light.p50 <= 0.75 },
  redirect_vs_bare: { value: http.redirect ? ratio(http.redirect.perSecond, http.bare.perSecond) : null, goal: '≥ 0.5', met: http.redirect ? http.redirect.perSecond / http.bare.perSecond >= 0.5 : false },
  rejected_vs_bare: { value: ratio(http.rejected.perSecond, http.bare.perSecond), goal: '(reported)', met: true },
  idle_memory_mb: { value: Math.round(idleMb), goal: '< 700', met: idleMb < 700 },
  idle_memory_rules_mb: { value: Math.round(idleWithRulesMb), goal: '< 700', met: idleWithRulesMb < 700 },
  block_ads_vs_none: { value: ratio(blocking.block_ads.p50, blocking.none.p50), goal: '≤ 1.0', met: blocking.block_ads.p50 <= blocking.none.p50 },
  first_shot_seconds: { value: Math.round(firstShotSeconds * 100) / 100, goal: '≤ 3', met: firstShotSeconds <= 3 },
};
for (const [name, t] of Object.entries(targets)) lines.push(`  ${name.padEnd(22)} ${String(t.value).padStart(8)}  goal ${t.goal.padEnd(10)} ${t.met ? 'met' : 'NOT met'}`);
process.stdout.write(`\n${lines.join('\n')}\n`);
Object.assign(results, { baselineA, baselineB, e2e, blocking, idleWithRulesMb, rules, variants, http, idleMb, loadMb, firstShotSeconds, targets });
const out = path.join(import.meta.dirname, 'results');
mkdirSync(out, { recursive: true });
writeFileSync(path.join(out, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
log(`wrote ${path.join(out, 'latest.json')}`);
process.exit(0);
