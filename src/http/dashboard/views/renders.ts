// The renders page (the workspace's latest renders) and one render's page: what it rendered, how
// long each step took, the output, what the page showed when it failed, and its webhook.
import type { DeliveryRecord } from '../../../delivery/records.ts';
import { formatFacts } from '../../../domain/formats.ts';
import type { RenderRecord } from '../../../domain/render.ts';
import type { RecentRender } from '../../../renders/recent.ts';
import { html, type Html } from './html.ts';
import { layout, type Viewer } from './layout.ts';
import { renderTarget, statusPill } from './status.ts';

/** Which renders the list shows. */
export type RenderFilter = 'all' | 'succeeded' | 'failed';

/** Everything the renders page shows. */
export interface RendersView {
  viewer: Viewer;
  filter: RenderFilter;
  renders: RecentRender[];
  /** How many renders the workspace's list holds, whatever the filter. */
  total: number;
}

/** Everything a render's page shows. */
export interface RenderView {
  viewer: Viewer;
  record: RenderRecord;
  fileUrl?: string;
  failureCaptureUrl?: string;
  /** Its webhook delivery, when it asked for one and it is recorded. */
  delivery: DeliveryRecord | null;
}

const time = (iso: string | undefined) => (iso ? iso.replace('T', ' ').slice(0, 19) : '');

/** Created to finished, as people read it. */
function duration(render: Pick<RenderRecord, 'created_at' | 'finished_at'>): string {
  if (!render.finished_at) return '';
  const ms = Math.max(0, Date.parse(render.finished_at) - Date.parse(render.created_at));
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`;
}

const filterLabels: Record<RenderFilter, string> = { all: 'All', succeeded: 'Succeeded', failed: 'Failed' };

/** The renders page. */
export function rendersPage(view: RendersView): Html {
  const { renders, filter } = view;
  const tabs = (Object.keys(filterLabels) as RenderFilter[]).map(
    (key) =>
      html`<a class="button secondary copy" id="filter-${key}" href="/dashboard/renders${key === 'all' ? '' : `?status=${key}`}"${key === filter ? html` aria-current="page"` : ''}>${filterLabels[key]}</a>`,
  );
  const table = html`<table id="renders"><thead><tr><th>Created</th><th>Target</th><th>Status</th><th>Format</th><th>Duration</th><th>Error</th></tr></thead><tbody>${renders.map(
    (
      r,
    ) => html`<tr id="render-${r.render_id}" data-status="${r.status}"><td class="small"><a href="/dashboard/renders/${r.render_id}">${time(r.created_at)}</a></td>
  <td class="url small target">${renderTarget(r)}</td><td>${statusPill(r.status)}</td><td class="small">${r.format}</td><td class="small">${duration(r)}</td>
  <td class="small">${r.error_code ? html`<code>${r.error_code}</code> ${r.error_message ?? ''}` : ''}</td></tr>`,
  )}</tbody></table>`;
  return layout({
    title: 'Renders',
    viewer: view.viewer,
    active: 'renders',
    body: html`<h1>Renders</h1>
<section class="card stack">
  <div class="row filters" role="navigation" aria-label="Filter by status">${tabs}</div>
  <p class="small muted">${view.total === 0 ? "This workspace's finished renders will be listed here" : `This workspace's latest ${view.total} finished renders`}, newest first. Open one for its timeline, its output and its webhook; a failed one shows what the page looked like when it failed, for a day.</p>
  ${renders.length === 0 ? html`<p class="muted" id="no-renders">${view.total === 0 ? 'No finished renders yet.' : `None of the latest renders ${filter}.`}</p>` : table}
</section>`,
  });
}

function output(view: RenderView): Html {
  const { record, fileUrl } = view;
  if (record.status !== 'succeeded') return html``;
  if (!fileUrl) return html`<p class="muted">No file was recorded for this render.</p>`;
  // A format a browser shows inline is an image on the page; the others are a link.
  const image = formatFacts(record.format).inline === true;
  return html`<section class="card stack" id="output"><h2>Output</h2>
  ${
    image
      ? html`<a href="${fileUrl}"><img id="output-image" class="shot" src="${fileUrl}" alt="The rendered ${record.format}"></a>`
      : html`<p><a class="button secondary" id="output-file" href="${fileUrl}">Open the ${record.format} file</a></p>`
  }
  ${record.size_bytes === undefined ? '' : html`<p class="small muted">${(record.size_bytes / 1024).toFixed(1)} KB</p>`}
</section>`;
}

function failure(view: RenderView): Html {
  const { record, failureCaptureUrl } = view;
  if (record.status !== 'failed') return html``;
  return html`<section class="card stack" id="failure"><h2>Why it failed</h2>
  <div class="notice bad"><strong><code id="error-code">${record.error_code ?? ''}</code></strong> <span id="error-message">${record.error_message ?? ''}</span></div>
  ${
    failureCaptureUrl
      ? html`<p class="small muted">The page as it was when the render failed (kept for a day):</p>
  <a href="${failureCaptureUrl}"><img id="failure-capture" class="shot" src="${failureCaptureUrl}" alt="The page when the render failed"></a>`
      : html`<p class="small muted">No capture of the page: it failed before the page loaded, or the capture's day has passed.</p>`
  }
</section>`;
}

function timeline(record: RenderRecord): Html {
  const steps = record.timeline ?? [];
  return html`<section class="card stack"><h2>Timeline</h2>
  ${
    steps.length === 0
      ? html`<p class="muted">No timeline was recorded for this render.</p>`
      : html`<table id="timeline"><thead><tr><th>Step</th><th>At (UTC)</th><th>Since the step before</th></tr></thead><tbody>${steps.map(
          (step) =>
            html`<tr data-step="${step.step}"><td>${step.step}${step.error_code ? html` <code>${step.error_code}</code>` : ''}</td><td class="small">${step.at.replace('T', ' ').replace('Z', '')}</td><td class="small">${step.ms} ms</td></tr>`,
        )}</tbody></table>`
  }
</section>`;
}

function webhook(view: RenderView): Html {
  const { record, delivery } = view;
  if (!record.webhook_url) return html``;
  return html`<section class="card stack" id="webhook"><h2>Webhook</h2>
  ${
    delivery
      ? html`<p>${statusPill(delivery.status)} to <code>${delivery.webhook_url}</code> · attempts: ${delivery.attempts}${delivery.last_error ? html` · last error: ${delivery.last_error}` : ''}
  · <a id="delivery-link" href="/dashboard/deliveries/${delivery.id}">The request</a></p>`
      : html`<p class="muted">To <code>${record.webhook_url}</code>: no delivery recorded yet.</p>`
  }
</section>`;
}

/** One render's page. */
export function renderPage(view: RenderView): Html {
  const { record } = view;
  return layout({
    title: 'Render',
    viewer: view.viewer,
    active: 'renders',
    body: html`<h1>Render <code>${record.render_id}</code></h1>
<section class="card stack" id="summary">
  <p>${statusPill(record.status)} <span id="render-target" class="url">${renderTarget(record)}</span></p>
  <p class="small muted">${record.format} · created ${time(record.created_at)}${record.finished_at ? ` · finished ${time(record.finished_at)} · ${duration(record)}` : ''}${record.external_identifier ? ` · external id ${record.external_identifier}` : ''}</p>
</section>
${failure(view)}
${output(view)}
${timeline(record)}
${webhook(view)}
<p><a href="/dashboard/renders">All renders</a></p>`,
  });
}
