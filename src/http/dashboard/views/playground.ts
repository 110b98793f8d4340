// The playground page: the options form grouped as the API reference is, the result, and the same request as code.
import type { Parameter } from '../../../domain/parameters.ts';
import {
  menuValue,
  menuValues,
  onByDefault,
  playgroundFields,
  type Choices,
  type PlaygroundMode,
} from '../playground-request.ts';
import { html, type Html } from './html.ts';
import { csrfField, layout, type Viewer } from './layout.ts';

/** A finished render, as the page shows it. */
export interface PlaygroundResult {
  render_id: string;
  file_url: string;
  content_type: string;
  size_bytes: number;
  /** From the render's own record: created to finished. */
  render_ms?: number;
  /** Answered from the cache of signed URLs (a redirect, not a new render). */
  cached: boolean;
}

/** A refusal or a failed render: the API's error code and message. */
export interface PlaygroundError {
  render_id?: string;
  error_code: string;
  error_message: string;
  error_details?: { parameter?: string; message?: string }[];
}

/** Everything the playground shows. */
export interface PlaygroundView {
  viewer: Viewer;
  /** A screenshot (/api/take) or an animation (/api/animate). */
  mode: PlaygroundMode;
  choices: Choices;
  result?: PlaygroundResult | PlaygroundError;
  signedUrl: string;
  code: { curl: string; client: string; sdk: string };
  /** The formats this server's image library cannot write (no encoder): left out of the format menu. */
  unwritable: ReadonlySet<string>;
}

const groupTitles: Record<string, string> = {
  target: 'What to render',
  viewport: 'Viewport and device',
  emulation: 'Emulation',
  wait: 'Waiting',
  page: 'Page changes',
  blocking: 'Blocking',
  capture: 'Capture',
  output: 'Output',
  animation: 'Recording',
  cache: 'Cache',
  storage: "Your storage (the workspace's default)",
};

const copyButton = (target: string) =>
  html`<button class="secondary copy" type="button" data-copy="${target}" hidden>Copy</button>`;

function field(parameter: Parameter, choices: Choices, unwritable: ReadonlySet<string>): Html {
  const { name, type, description } = parameter;
  const menu = menuValues(parameter).filter((value) => name !== 'format' || !unwritable.has(value));
  const values = choices.filter(([chosen]) => chosen === name).map(([, value]) => value);
  const id = `field-${name}`;
  // The format menu holds what this server can write: its help names those, not the API's whole list.
  const text =
    name === 'format'
      ? `Output format, one of those this server writes: ${menu.join(', ')}${menu.includes('jpeg') ? ' (jpg is jpeg)' : ''}.`
      : description;
  const help = html`<span class="muted small">${text}</span>`;
  if (type.kind === 'boolean') {
    const on = values.length > 0 ? values[0] === 'true' : onByDefault(parameter);
    return html`<div class="switch">${onByDefault(parameter) ? html`<input type="hidden" name="${name}" value="false">` : ''}
  <input type="checkbox" id="${id}" name="${name}" value="true"${on ? html` checked` : ''}>
  <label for="${id}"><code>${name}</code> ${help}</label></div>`;
  }
  const label = html`<label for="${id}"><code>${name}</code> ${help}</label>`;
  if (type.kind === 'enum') {
    const chosen = menuValue(parameter, values[0] ?? String(parameter.default ?? ''));
    return html`<div>${label}<select id="${id}" name="${name}">${parameter.default === undefined ? html`<option value=""${chosen === '' ? html` selected` : ''}>(not set)</option>` : ''}${menu.map((value) => html`<option${value === chosen ? html` selected` : ''}>${value}</option>`)}</select></div>`;
  }
  if (type.kind === 'integer' || type.kind === 'number') {
    const step = type.kind === 'number' ? 'any' : '1';
    return html`<div>${label}<input type="number" id="${id}" name="${name}" min="${type.min}" max="${type.max}" step="${step}" value="${values[0] ?? ''}" placeholder="${parameter.default === undefined ? '' : String(parameter.default)}"></div>`;
  }
  if (type.kind === 'list') {
    return html`<div>${label}<textarea id="${id}" name="${name}" rows="2" placeholder="one a line">${values.join('\n')}</textarea></div>`;
  }
  if (type.maxLength > 10_000)
    return html`<div>${label}<textarea id="${id}" name="${name}" rows="3">${values[0] ?? ''}</textarea></div>`;
  return html`<div>${label}<input type="text" id="${id}" name="${name}" value="${values[0] ?? ''}"${name === 'url' ? html` placeholder="https://example.com"` : ''}></div>`;
}

// Screenshot or animation: a link each (a page of its own, so it works without JavaScript); the
// target (url or html) goes along.
function modes(view: PlaygroundView): Html {
  const target = new URLSearchParams(view.choices.filter(([name]) => name === 'url' || name === 'html')).toString();
  const link = (mode: PlaygroundMode, label: string) => {
    const query = [mode === 'animate' ? 'mode=animate' : '', target].filter(Boolean).join('&');
    return html`<a id="mode-${mode}" href="/dashboard/playground${query ? `?${query}` : ''}"${mode === view.mode ? html` aria-current="page" class="button"` : html` class="button secondary"`}>${label}</a>`;
  };
  return html`<div class="row" role="group" aria-label="What to make">${link('take', 'Screenshot')}${link('animate', 'Animation')}</div>`;
}

function form(view: PlaygroundView): Html {
  const groups = new Map<string, Parameter[]>();
  for (const parameter of playgroundFields(view.mode))
    groups.set(parameter.group, [...(groups.get(parameter.group) ?? []), parameter]);
  // #result: without JavaScript, the answer opens scrolled to the result (a redirect keeps the fragment).
  return html`<form id="playground" class="card stack" method="post" action="/dashboard/playground#result">${csrfField(view.viewer.csrf)}
  ${modes(view)}${view.mode === 'animate' ? html`<input type="hidden" name="mode" value="animate">` : ''}
  ${[...groups].map(([group, fields]) => html`<fieldset class="group"><legend>${groupTitles[group] ?? group}</legend>${fields.map((parameter) => field(parameter, view.choices, view.unwritable))}</fieldset>`)}
  <div class="row render-actions"><button type="submit" id="render">Render</button><button type="button" class="secondary" id="render-cancel" hidden>Cancel</button>
    <span class="mono small" id="render-elapsed" aria-hidden="true"></span><span class="muted small" id="render-state" role="status">Renders with this workspace's keys and counts toward its quota like any screenshot.</span></div>
</form>`;
}

const kilobytes = (bytes: number) => (bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`);

function outcome(result: PlaygroundResult | PlaygroundError): Html {
  if ('error_code' in result) {
    return html`<div class="notice bad" id="render-error"><p><strong id="failure-title">${result.render_id ? 'The render failed' : 'The request was refused'}</strong></p>
  <strong><code id="error-code">${result.error_code}</code></strong> <span id="error-message">${result.error_message}</span>
  ${result.render_id ? html`<p class="small"><a id="render-link" href="/dashboard/renders/${result.render_id}">Its timeline, and the page as it was when it failed</a></p>` : ''}
  ${result.error_details?.length ? html`<ul class="small">${result.error_details.map((d) => html`<li><code>${d.parameter ?? ''}</code> ${d.message ?? ''}</li>`)}</ul>` : ''}</div>`;
  }
  const image = result.content_type.startsWith('image/');
  const video = result.content_type.startsWith('video/');
  const timing = result.cached
    ? 'from the cache (no new render, not charged)'
    : result.render_ms === undefined
      ? ''
      : `rendered in ${(result.render_ms / 1000).toFixed(2)} s`;
  return html`<div class="stack">
  ${
    image
      ? html`<a href="${result.file_url}"><img id="result-image" class="shot" src="${result.file_url}" alt="The rendered screenshot"></a>`
      : video
        ? html`<video id="result-video" class="shot" src="${result.file_url}" controls autoplay muted loop playsinline></video>
  <p class="small"><a id="result-file" href="${result.file_url}">Download the video</a> (a browser may not play every format: mov and avi often download instead)</p>`
        : html`<p><a class="button secondary" id="result-file" href="${result.file_url}">Open the ${result.content_type.split(';')[0]} file</a></p>`
  }
  <p class="small muted" id="result-facts"><span id="result-size">${kilobytes(result.size_bytes)}</span> · ${result.content_type.split(';')[0]} · ${timing} · render <a href="/dashboard/renders/${result.render_id}"><code>${result.render_id}</code></a></p>
</div>`;
}

/** Whether the form names something to render: without it there is no request to show as code. */
const hasTarget = (choices: Choices) =>
  choices.some(([name, value]) => ['url', 'html', 'markdown'].includes(name) && value.trim() !== '');

function code(view: PlaygroundView): Html {
  if (!hasTarget(view.choices))
    return html`<div class="stack" id="no-request"><h2>The same request</h2><p class="muted small">Give a <code>url</code>, <code>html</code> or <code>markdown</code>: the request is then shown here as a signed URL, a curl line and code.</p></div>`;
  const block = (id: string, title: string, text: string) =>
    html`<div><div class="row"><h3>${title}</h3>${copyButton(id)}</div><pre id="${id}">${text}</pre></div>`;
  return html`<div class="stack">
  <h2>The same request</h2>
  <div><div class="row"><h3>Signed URL</h3>${copyButton('signed-url')}</div><div class="key"><code id="signed-url">${view.signedUrl}</code></div></div>
  ${block('curl-line', 'curl', view.code.curl)}
  ${block('client-snippet', '@shutterbus/client', view.code.client)}
  ${block('sdk-snippet', 'screenshotone-api-sdk', view.code.sdk)}
</div>`;
}

/** The playground page; `#result` is the part the script swaps in after a render. */
export function playgroundPage(view: PlaygroundView): Html {
  return layout({
    title: 'Playground',
    viewer: view.viewer,
    active: 'playground',
    body: html`<h1>Playground</h1>
<div class="playground">
${form(view)}
<section class="card stack" id="result" aria-live="polite"${view.result ? html` data-outcome="${'error_code' in view.result ? 'failed' : 'succeeded'}"` : ''}>
  <h2>Result</h2>
  ${view.result ? outcome(view.result) : html`<p class="muted">Choose the options and press Render. The page's address keeps your choices and the result, so you can send it to a teammate.</p>`}
  ${code(view)}
</section>
</div>`,
  });
}
