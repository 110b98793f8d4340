// The usage page: this month against the quota, a daily chart, and the latest renders and webhook deliveries.
import type { DeliveryRecord } from '../../../delivery/records.ts';
import type { RecentRender } from '../../../renders/recent.ts';
import type { Workspace } from '../../../workspaces/workspace.ts';
import { html, trusted, type Html } from './html.ts';
import { layout, type Viewer } from './layout.ts';
import { renderTarget, statusPill } from './status.ts';

/** A webhook delivery as the usage page lists it. */
export type DeliveryRow = Pick<
  DeliveryRecord,
  'id' | 'render_id' | 'webhook_url' | 'status' | 'attempts' | 'last_error' | 'updated_at'
>;

/** Everything the usage page shows. */
export interface UsageView {
  viewer: Viewer;
  workspace: Workspace;
  month: string;
  used: number;
  days: Record<string, number>;
  renders: RecentRender[];
  /** null: this installation records no webhook deliveries. */
  deliveries: DeliveryRow[] | null;
}

/** A bar per day of the month as inline SVG; numbers only, so nothing in it needs escaping. */
export function dailyChart(month: string, days: Record<string, number>): Html {
  const [year, monthNumber] = month.split('-').map(Number);
  const count = new Date(Date.UTC(year, monthNumber, 0)).getUTCDate();
  const values = Array.from({ length: count }, (_, i) => days[String(i + 1).padStart(2, '0')] ?? 0);
  const max = Math.max(1, ...values);
  const width = 620;
  const height = 160;
  const slot = width / count;
  const bars = values.map((value, i) => {
    const h = Math.round((value / max) * (height - 30));
    const x = (i * slot + slot * 0.15).toFixed(1);
    const label =
      i % 5 === 0 || i === count - 1
        ? `<text x="${(i * slot + slot / 2).toFixed(1)}" y="${height - 2}" text-anchor="middle">${i + 1}</text>`
        : '';
    return `<rect class="bar" x="${x}" y="${height - 16 - h}" width="${(slot * 0.7).toFixed(1)}" height="${h}" rx="2"><title>${month}-${String(i + 1).padStart(2, '0')}: ${value}</title></rect>${label}`;
  });
  return trusted(
    `<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="Successful screenshots per day in ${month}">` +
      `<line x1="0" y1="${height - 16}" x2="${width}" y2="${height - 16}" stroke="#e3e6ec"/>` +
      `<text x="0" y="10">max ${max}/day</text>${bars.join('')}</svg>`,
  );
}

const time = (iso: string | undefined) => (iso ? iso.replace('T', ' ').slice(0, 19) : '');

/** The usage page. */
export function usagePage(view: UsageView): Html {
  const { workspace, used } = view;
  const share = Math.min(100, Math.round((used / Math.max(1, workspace.quota)) * 100));
  return layout({
    title: 'Usage',
    viewer: view.viewer,
    active: 'usage',
    body: html`<h1>Usage</h1>
<section class="card stack">
  <h2>${view.month} <span class="muted small">(UTC)</span></h2>
  <div class="row"><span class="big" id="used">${used}</span><span class="muted">of ${workspace.quota} screenshots this month (${workspace.plan} plan)</span></div>
  <progress class="meter" max="${Math.max(1, workspace.quota)}" value="${Math.min(used, workspace.quota)}">${share}%</progress>
  <p class="small muted">Only successful screenshots count. Failed renders and cached redirects of signed URLs are free.</p>
  ${dailyChart(view.month, view.days)}
</section>
<section class="card">
  <h2>Latest renders <a class="small" href="/dashboard/renders">All of them</a></h2>
  ${
    view.renders.length === 0
      ? html`<p class="muted">No finished renders yet.</p>`
      : html`<table id="renders"><thead><tr><th>When</th><th>URL</th><th>Status</th><th>Why</th></tr></thead><tbody>${view.renders.map(
          (
            r,
          ) => html`<tr><td class="small">${time(r.finished_at ?? r.created_at)}</td><td class="url small">${renderTarget(r)}</td><td>${statusPill(r.status)}</td>
          <td class="small">${r.error_code ? html`<code>${r.error_code}</code> ${r.error_message ?? ''}` : html`<span class="muted">—</span>`}</td></tr>`,
        )}</tbody></table>`
  }
</section>
<section class="card" id="deliveries">
  <h2>Webhook deliveries</h2>
  ${
    view.deliveries === null
      ? html`<p class="muted">This installation does not record webhook deliveries.</p>`
      : view.deliveries.length === 0
        ? html`<p class="muted">None of the latest renders asked for a webhook.</p>`
        : html`<table><thead><tr><th>Updated</th><th>Webhook URL</th><th>Status</th><th>Attempts</th><th>Last error</th></tr></thead><tbody>${view.deliveries.map(
            (d) =>
              html`<tr><td class="small">${time(d.updated_at)}</td><td class="url small">${d.webhook_url}</td><td>${statusPill(d.status)}</td><td>${d.attempts}</td><td class="small">${d.last_error ?? ''}</td></tr>`,
          )}</tbody></table>`
  }
</section>`,
  });
}
