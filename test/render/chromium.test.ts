// The Chromium a BrowserHost launches: Playwright's own feature switches survive ours.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chromium } from 'playwright-core';
import { BrowserHost } from '../../src/render/browser/browser.ts';
import { findProcess, listProcesses, processTree, pssMb } from '../helpers/processes.ts';
import { CHROMIUM } from '../helpers/render.ts';

const test = suite('BrowserHost launch switches and its Chromium among the processes');

/**
 * The features a renderer of this process's browser started with `marker` runs with disabled: Chromium hands
 * its renderers the merged, effective list.
 */
function rendererDisabledFeatures(marker: string): string[] {
  const all = listProcesses();
  const browser = all.find((proc) => proc.ppid === process.pid && proc.argv.some((arg) => arg.startsWith(marker)));
  assert.ok(browser, 'the browser process is running');
  const tree = new Set(processTree([browser.pid], all));
  const renderer = all.find((proc) => tree.has(proc.pid) && proc.argv.includes('--type=renderer'));
  assert.ok(renderer, 'a renderer is running');
  return (
    renderer.argv
      .find((arg) => arg.startsWith('--disable-features='))
      ?.slice('--disable-features='.length)
      .split(',') ?? []
  );
}

test('every feature Playwright disables stays disabled, and RenderDocument and the spare renderer are off', async () => {
  const marker = `--shutterbus-probe=${randomUUID()}`;
  const plain = await chromium.launch({ executablePath: CHROMIUM, args: [marker] });
  let playwrights: string[];
  try {
    await (await plain.newPage()).goto('about:blank');
    playwrights = rendererDisabledFeatures(marker);
  } finally {
    await plain.close();
  }
  assert.ok(playwrights.includes('HttpsUpgrades'), 'the probe reads the list');

  // A renderer's command line, as /proc shows it, is cut to the room its zygote's argv and
  // environment had: Chromium's small environment (src/config.ts, browserEnv) is padded here so
  // that the whole list can be read.
  const host = new BrowserHost({
    executablePath: CHROMIUM,
    env: { PATH: '/usr/bin:/bin', ROOM_FOR_THE_TITLE: 'x'.repeat(4096) },
  });
  await host.start();
  try {
    const ours = rendererDisabledFeatures('--shutterbus-browser=');
    for (const feature of playwrights) assert.ok(ours.includes(feature), `${feature} is still disabled`);
    assert.ok(ours.includes('RenderDocument'));
    assert.ok(ours.includes('SpareRendererForSitePerProcess'));
  } finally {
    await host.close();
  }
});

test("no renderer of the address bar's pop-ups: only pages' renderers run beside the browser", async () => {
  const host = new BrowserHost({ executablePath: CHROMIUM });
  await host.start();
  try {
    await host.withPage(
      { timeout: 10, viewport_width: 1280, viewport_height: 720, device_scale_factor: 1, workspaceId: 'probe' },
      new AbortController().signal,
      (page) => page.goto('about:blank'),
    );
    const all = listProcesses();
    const tree = new Set(processTree([host.pid!], all));
    const renderers = all.filter((proc) => tree.has(proc.pid) && proc.argv.includes('--type=renderer'));
    assert.ok(renderers.length > 0, 'the page has a renderer');
    assert.equal(
      renderers.filter((proc) => proc.argv.includes('--top-chrome-webui')).map((proc) => proc.pid),
      [],
    );
  } finally {
    await host.close();
  }
});

test('two renders at once of one workspace, again and again, start no renderer process', async () => {
  const site = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>t</title><p>hello'),
  );
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  const host = new BrowserHost({ executablePath: CHROMIUM });
  await host.start();
  try {
    const setup = {
      timeout: 10,
      viewport_width: 1280,
      viewport_height: 720,
      device_scale_factor: 1,
      workspaceId: 'busy',
    };
    // Two warm pages (two contexts) of one workspace, taken by turns as a worker rendering two at once does.
    const pair = () =>
      Promise.all([0, 1].map(() => host.withPage(setup, new AbortController().signal, (page) => page.goto(url))));
    for (let round = 0; round < 3; round++) await pair();
    const renderers = () => {
      const all = listProcesses();
      const tree = new Set(processTree([host.pid!], all));
      return all.filter((proc) => tree.has(proc.pid) && proc.argv.includes('--type=renderer')).map((proc) => proc.pid);
    };
    const before = new Set(renderers());
    const started = new Set<number>();
    const watch = setInterval(
      () =>
        renderers()
          .filter((pid) => !before.has(pid))
          .forEach((pid) => {
            started.add(pid);
          }),
      10,
    );
    try {
      for (let round = 0; round < 10; round++) await pair();
    } finally {
      clearInterval(watch);
    }
    // A spare renderer launched for the context that navigated last was thrown away by the other's next navigation.
    assert.equal([...started], [], 'renderers started during 20 renders on warm pages');
  } finally {
    await host.close();
    await new Promise((resolve) => site.close(resolve));
  }
});

test('the process scanner finds the browser by its marker, the Chromium processes below it and their memory', async () => {
  const host = new BrowserHost({ executablePath: CHROMIUM });
  await host.start();
  try {
    const all = listProcesses();
    const launched = all.find(
      (proc) => proc.ppid === process.pid && proc.argv.some((arg) => arg.startsWith('--shutterbus-browser=')),
    );
    assert.ok(launched, 'the browser is a child of this process');
    assert.is(host.pid, launched.pid, 'the host found its browser, not a child of it');
    const marker = launched.argv.find((arg) => arg.startsWith('--shutterbus-browser='))!;
    assert.is(findProcess([marker, '--disable-quic'], all), launched.pid, 'found by its command line');
    assert.is(findProcess([marker, '--not-given'], all), null, 'every argument must be there');

    const tree = processTree([launched.pid], all);
    const below = all.filter((proc) => tree.includes(proc.pid) && proc.pid !== launched.pid);
    assert.ok(
      below.some((proc) => proc.argv.includes('--type=renderer')),
      'a renderer is below the browser',
    );
    assert.ok(
      below.every((proc) => proc.argv.some((arg) => arg.startsWith('--type='))),
      'nothing but Chromium children below it',
    );
    assert.not.ok(tree.includes(process.pid), 'the tree does not climb up');
    const browserMb = pssMb([launched.pid]);
    assert.ok(browserMb > 10, `the browser process holds ${browserMb} MB`);
    assert.ok(pssMb(tree) > browserMb, 'its children hold memory too');
  } finally {
    await host.close();
  }
});

test('the browser makes no request of its own: no update check, no account lookup', async () => {
  // A proxy that records whatever reaches it and answers nothing, in place of the egress proxy.
  const seen: string[] = [];
  const proxy = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(502).end();
  });
  proxy.on('connect', (req, socket) => {
    seen.push(`CONNECT ${req.url}`);
    socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const host = new BrowserHost({
    executablePath: CHROMIUM,
    proxyServer: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
  });
  try {
    await host.start();
    await host.withPage(
      { timeout: 10, viewport_width: 800, viewport_height: 600, device_scale_factor: 1, workspaceId: 'ws_quiet' },
      new AbortController().signal,
      async (page) => page.setContent('<p>quiet</p>'),
    );
    // Without the switches, Chromium asks update.googleapis.com within 1 s of its start and
    // accounts.google.com at about 1, 2 and 5 s.
    await new Promise((resolve) => setTimeout(resolve, 6000));
    assert.equal(seen, []);
  } finally {
    await host.close();
    proxy.close();
  }
});

test.run();
