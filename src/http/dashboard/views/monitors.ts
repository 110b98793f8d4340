// The monitors page (each monitor's last capture, its status, pause and resume) and one monitor's history of changes.
import type { MonitorChange, Monitor, TextChange } from '../../../domain/monitor.ts';
import { DEFAULT_MIN_CHANGED_PIXELS } from '../../../domain/monitor.ts';
import { html, type Html } from './html.ts';
import { csrfField, layout, type Notice, type Viewer } from './layout.ts';

/** Everything the monitors page shows. */
export interface MonitorsView {
  viewer: Viewer;
  monitors: Monitor[];
  manager: boolean;
  fileUrl: (fileName: string) => string;
  notices: Notice[];
}

/** One monitor and its changes. */
export interface MonitorView {
  viewer: Viewer;
  monitor: Monitor;
  manager: boolean;
  fileUrl: (fileName: string) => string;
}

const time = (iso: string | undefined) => (iso ? iso.replace('T', ' ').slice(0, 19) : '');
const pill = (monitor: Monitor) =>
  monitor.status === 'paused'
    ? html`<span class="pill warn">paused</span>`
    : html`<span class="pill ${monitor.last_status === 'failed' ? 'bad' : 'ok'}">${monitor.last_status === 'failed' ? 'failing' : 'active'}</span>`;
const every = (seconds: number) =>
  seconds % 3600 === 0 ? `${seconds / 3600} h` : seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;

/** Pause or resume, for owners and admins. */
const statusForm = (viewer: Viewer, monitor: Monitor) => {
  const next = monitor.status === 'active' ? 'paused' : 'active';
  return html`<form class="inline" method="post" action="/dashboard/monitors/${monitor.monitor_id}/status">${csrfField(viewer.csrf)}<input type="hidden" name="status" value="${next}"><button class="secondary copy" type="submit">${next === 'paused' ? 'Pause' : 'Resume'}</button></form>`;
};

const capture = (url: string, alt: string) =>
  html`<a href="${url}"><img class="shot" src="${url}" alt="${alt}" loading="lazy"></a>`;

/** The monitors page. */
export function monitorsPage(view: MonitorsView): Html {
  const { viewer, monitors, manager, fileUrl } = view;
  const rows = monitors.map(
    (monitor) => html`<tr id="monitor-${monitor.monitor_id}" data-status="${monitor.status}">
  <td class="capture">${monitor.last_file_name ? capture(fileUrl(monitor.last_file_name), 'Last capture') : html`<span class="muted small">no capture yet</span>`}</td>
  <td class="url small"><a href="/dashboard/monitors/${monitor.monitor_id}">${monitor.target}</a><br><span class="mono muted">${monitor.monitor_id}</span></td>
  <td>${pill(monitor)}</td><td class="small">every ${every(monitor.interval)}</td>
  <td class="small">${time(monitor.last_run_at)}</td><td class="small">${monitor.status === 'active' ? time(monitor.next_run_at) : ''}</td>
  <td>${monitor.changes.length}</td>
  <td class="row">${manager ? statusForm(viewer, monitor) : ''}</td></tr>`,
  );
  return layout({
    title: 'Monitors',
    viewer,
    active: 'monitors',
    notices: view.notices,
    body: html`<h1>Monitors</h1>
<section class="card stack">
  <p class="small muted">Pages this workspace renders on a schedule. Each tick is one screenshot; a capture that differs from the last one by more than the monitor's threshold is announced to its webhook as <code>monitor.changed</code>.
  Create and delete monitors with <code>POST /api/monitors</code> and <code>DELETE /api/monitors/{id}</code>.${manager ? '' : ' Owners and admins can pause and resume them here.'}</p>
  ${
    monitors.length === 0
      ? html`<p class="muted">This workspace has no monitors yet.</p>`
      : html`<table id="monitors"><thead><tr><th>Last capture</th><th>Page</th><th>Status</th><th>Interval</th><th>Last run</th><th>Next run</th><th>Changes</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
  }
</section>`,
  });
}

/** The changed lines of a change's text: removed ones struck through, added ones underlined, a changed one both. */
const textDiff = (lines: TextChange[]) =>
  html`<tr class="text-diff"><td></td><td colspan="3"><ul class="small mono">${lines.map(
    (line) =>
      html`<li>${line.before !== null ? html`<del>${line.before}</del>` : ''}${line.before !== null && line.after !== null ? ' → ' : ''}${line.after !== null ? html`<ins>${line.after}</ins>` : ''}</li>`,
  )}</ul></td></tr>`;

const changeRow = (change: MonitorChange, fileUrl: (name: string) => string) => html`<tr class="change">
  <td class="small">${time(change.at)}<br>${(change.changed_share * 100).toFixed(2)} % changed${change.changed_pixels !== undefined ? html`<br>${change.changed_pixels} pixels` : ''}</td>
  <td>${capture(fileUrl(change.previous_file_name), 'Before')}</td>
  <td>${capture(fileUrl(change.file_name), 'After')}</td>
  <td>${capture(fileUrl(change.diff_file_name), 'What changed, in red')}</td></tr>${change.text_diff && change.text_diff.length > 0 ? textDiff(change.text_diff) : ''}`;

/** One monitor: its settings, last capture and the history of its changes with their diffs. */
export function monitorPage(view: MonitorView): Html {
  const { viewer, monitor, manager, fileUrl } = view;
  return layout({
    title: 'Monitor',
    viewer,
    active: 'monitors',
    body: html`<h1>Monitor <code>${monitor.monitor_id}</code></h1>
<section class="card stack">
  <p>${pill(monitor)} <span class="url">${monitor.target}</span> every ${every(monitor.interval)} · compares ${monitor.compare ?? 'pixels'} · threshold ${(monitor.threshold * 100).toFixed(2)} % or ${monitor.min_changed_pixels ?? DEFAULT_MIN_CHANGED_PIXELS} pixels · webhook <code>${monitor.webhook_url}</code></p>
  <p class="small muted">Last run ${time(monitor.last_run_at) || 'not yet'}${monitor.status === 'active' ? ` · next run at about ${time(monitor.next_run_at)}` : ''}${monitor.last_error_code ? html` · last error: <code>${monitor.last_error_code}</code>` : ''}</p>
  ${manager ? html`<p>${statusForm(viewer, monitor)}</p>` : ''}
  ${monitor.last_file_name ? html`<div class="capture-large">${capture(fileUrl(monitor.last_file_name), 'Last capture')}</div>` : ''}
</section>
<section class="card stack">
  <h2>Changes</h2>
  ${
    monitor.changes.length === 0
      ? html`<p class="muted">No change announced yet.</p>`
      : html`<table id="changes"><thead><tr><th>When</th><th>Before</th><th>After</th><th>Diff</th></tr></thead><tbody>${monitor.changes.map((change) => changeRow(change, fileUrl))}</tbody></table>`
  }
</section>
<p><a href="/dashboard/monitors">All monitors</a></p>`,
  });
}
