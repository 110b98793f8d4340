// The Chromium a BrowserHost launches: Playwright's own feature switches survive ours.

import { readdirSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chromium } from 'playwright-core';
import { BrowserHost } from '../../src/render/browser.ts';

const test = suite('BrowserHost launch switches');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/lib/chromium/chromium';

// Chromium's child processes rewrite their command line into one space-separated string.
interface Proc { pid: number; ppid: number; argv: string[] }

function processes(): Proc[] {
  const found: Proc[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      found.push({ pid: Number(entry), ppid, argv: readFileSync(`/proc/${entry}/cmdline`, 'utf8').split(/[\0 ]+/) });
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/**
 * The features a renderer of this process's browser started with `marker` runs with disabled: Chromium hands
 * its renderers the merged, effective list.
 */
function rendererDisabledFeatures(marker: string): string[] {
  const all = processes();
  const browser = all.find((proc) => proc.ppid === process.pid && proc.argv.some((arg) => arg.startsWith(marker)));
  assert.ok(browser, 'the browser process is running');
  const tree = new Set([browser.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const proc of all) if (tree.has(proc.ppid) && !tree.has(proc.pid)) { tree.add(proc.pid); grew = true; }
  }
  const renderer = all.find((proc) => tree.has(proc.pid) && proc.argv.includes('--type=renderer'));
  assert.ok(renderer, 'a renderer is running');
  return renderer.argv.find((arg) => arg.startsWith('--disable-features='))?.slice('--disable-features='.length).split(',') ?? [];
}

test("every feature Playwright disables stays disabled, and RenderDocument is off", async () => {
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

  const host = new BrowserHost({ executablePath: CHROMIUM });
  await host.start();
  try {
    const ours = rendererDisabledFeatures('--shutterbus-browser=');
    for (const feature of playwrights) assert.ok(ours.includes(feature), `${feature} is still disabled`);
    assert.ok(ours.includes('RenderDocument'));
  } finally {
    await host.close();
  }
});

test.run();
