// A monitor's text, read beside the capture: the page's (or the selector's) visible text in reading
// order, read apart from the page's scripts, and bounded however much text the page makes.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { capturePage } from '../../src/render/capture.ts';
import { MONITOR_TEXT_LIMIT, withMonitorText } from '../../src/render/outputs/monitor-text.ts';
import { makeOutput } from '../../src/render/outputs/output.ts';
import { renderDefaults } from '../../src/domain/options.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';

const text = suite('render: the text a monitor compares');
let rig: RenderRig;

const page = (body: string) => `<!doctype html><html><head><meta charset="utf-8"></head><body>${body}</body></html>`;
const routes = {
  '/text/plans': (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      page(
        `<h1>Pricing</h1><div id="plans"><p>Pro   $19 / month</p><p style="display:none">Hidden plan</p><table><tr><td>Team</td><td>$49</td></tr></table></div><p>Footer</p>
        <script>
          // A hostile page: innerText and querySelector of its own world lie.
          Object.defineProperty(HTMLElement.prototype, 'innerText', { get() { return 'forged'; } });
          Document.prototype.querySelector = () => null;
        </script>`,
      ),
    );
  },
  '/text/flood': (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page(`<script>document.body.append('word '.repeat(${MONITOR_TEXT_LIMIT}));</script>`));
  },
};

text.before(async () => {
  rig = await startRenderRig({ workspaceId: 'ws_monitor_text', routes });
});

text.after(async () => {
  await rig?.stop();
});

const read = (path: string, selector?: string) =>
  capturePage(
    rig.host,
    { ...renderDefaults, timeout: 15, url: rig.site.url + path, ...(selector ? { selector } : {}) },
    new AbortController().signal,
    { workspaceId: 'ws_monitor_text', make: withMonitorText(makeOutput) },
  );

text('the visible text in reading order, unforged by the page; of the selector when given', async () => {
  const whole = await read('/text/plans');
  assert.ok(whole.image.length > 0, 'the capture is made as well');
  const lines = whole.monitorText!.split('\n').filter((line) => line.trim() !== '');
  assert.equal(lines, ['Pricing', 'Pro $19 / month', 'Team\t$49', 'Footer']);
  const scoped = await read('/text/plans', '#plans');
  assert.equal(
    scoped.monitorText!.split('\n').filter((line) => line.trim() !== ''),
    ['Pro $19 / month', 'Team\t$49'],
  );
});

text('a page that makes more text than a monitor keeps is cut at the limit', async () => {
  const flood = await read('/text/flood');
  assert.is(flood.monitorText!.length, MONITOR_TEXT_LIMIT);
  assert.ok(flood.monitorText!.startsWith('word word'));
});

text('a render that is not a monitor text tick reads no text', async () => {
  const plain = await rig.render('/text/plans');
  assert.is(plain.monitorText, undefined);
});

text.run();
