// The deliveries page (the latest webhook deliveries, "Send again" for dead letters) and one delivery's request.
import type { DeliveryRecord } from '../../../delivery/records.ts';
import { html, type Html } from './html.ts';
import { csrfField, layout, type Notice, type Viewer } from './layout.ts';
import { statusPill } from './status.ts';

/** Everything the deliveries page shows; `rows` null: this installation records no deliveries. */
export interface DeliveriesView {
  viewer: Viewer;
  rows: { record: DeliveryRecord; next_attempt_at?: string }[] | null;
  manager: boolean;
  notices: Notice[];
}

/** One delivery and the request it sends. */
export interface DeliveryView {
  viewer: Viewer;
  record: DeliveryRecord;
  headers: Record<string, string>;
  attempted: boolean;
  manager: boolean;
  next_attempt_at?: string;
}

const time = (iso: string | undefined) => (iso ? iso.replace('T', ' ').slice(0, 19) : '');
const pill = statusPill;

const resendForm = (viewer: Viewer, id: string) =>
  html`<form class="inline" method="post" action="/dashboard/deliveries/${id}/resend">${csrfField(viewer.csrf)}<button class="secondary copy resend" type="submit">Send again</button></form>`;

/** The deliveries page. */
export function deliveriesPage(view: DeliveriesView): Html {
  const { viewer, rows, manager } = view;
  const table = (list: NonNullable<DeliveriesView['rows']>) =>
    html`<table id="deliveries"><thead><tr><th>Created</th><th>Webhook URL</th><th>Status</th><th>Attempts</th><th>Last error</th><th>Next attempt</th><th></th></tr></thead><tbody>${list.map(
      ({
        record,
        next_attempt_at,
      }) => html`<tr id="delivery-${record.id}" data-status="${record.status}"><td class="small">${time(record.created_at)}</td><td class="url small">${record.webhook_url}</td>
  <td>${pill(record.status)}</td><td>${record.attempts}</td><td class="small">${record.last_error ?? ''}</td><td class="small">${time(next_attempt_at)}</td>
  <td class="row"><a class="small" href="/dashboard/deliveries/${record.id}">Request</a>${record.status === 'dead' && manager ? resendForm(viewer, record.id) : ''}</td></tr>`,
    )}</tbody></table>`;
  return layout({
    title: 'Deliveries',
    viewer,
    active: 'deliveries',
    notices: view.notices,
    body: html`<h1>Webhook deliveries</h1>
<section class="card stack">
  <p class="small muted">The webhooks of this workspace's latest renders. A failed attempt is retried on the schedule; after the last one the delivery is dead.
  ${manager ? 'Send a dead one again once the receiver is fixed: it keeps its delivery id, so receivers see the same X-Webhook-Id.' : 'Owners and admins can send a dead one again.'}</p>
  ${
    rows === null
      ? html`<p class="muted">This installation does not record webhook deliveries.</p>`
      : rows.length === 0
        ? html`<p class="muted">None of the latest renders asked for a webhook (<code>webhook_url</code>).</p>`
        : table(rows)
  }
</section>`,
  });
}

/** One delivery: its state, and the body and headers of its request. */
export function deliveryPage(view: DeliveryView): Html {
  const { viewer, record, headers } = view;
  return layout({
    title: 'Delivery',
    viewer,
    active: 'deliveries',
    body: html`<h1>Delivery <code>${record.id}</code></h1>
<section class="card stack">
  <p>${pill(record.status)} to <code>${record.webhook_url}</code> · attempts: ${record.attempts}${record.last_error ? html` · last error: <span id="last-error">${record.last_error}</span>` : ''}${view.next_attempt_at ? html` · next attempt at about ${time(view.next_attempt_at)}` : ''}</p>
  <p class="small muted">Render <code>${record.render_id}</code> · created ${time(record.created_at)} · updated ${time(record.updated_at)}</p>
  ${record.status === 'dead' && view.manager ? html`<p>${resendForm(viewer, record.id)}</p>` : ''}
</section>
<section class="card stack">
  <h2>Request</h2>
  <p class="small muted">POST ${record.webhook_url}. ${
    view.attempted
      ? `The headers of the last attempt${record.last_attempt_at ? `, at ${time(new Date(record.last_attempt_at * 1000).toISOString())}` : ''}; every attempt carries its own timestamp and signatures (shown with the workspace's current secret key).`
      : 'Not sent yet; these are the headers an attempt would carry now.'
  }</p>
  <pre id="delivery-headers">${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n')}</pre>
  <pre id="delivery-body">${record.body}</pre>
</section>
<p><a href="/dashboard/deliveries">All deliveries</a></p>`,
  });
}
