// What several pages show the same way: a status as a coloured pill, and what a render rendered.
import type { RenderRecord } from '../../../domain/render.ts';
import { html, type Html } from './html.ts';

const good = new Set(['succeeded', 'delivered']);
const bad = new Set(['failed', 'dead']);

/** A render's or a delivery's status, spelled one way on every page ("backing off", not "backing_off"). */
export function statusPill(status: string): Html {
  const kind = good.has(status) ? 'ok' : bad.has(status) ? 'bad' : 'warn';
  return html`<span class="pill ${kind}">${status.replaceAll('_', ' ')}</span>`;
}

/** What a render rendered: its URL, or "HTML document" for a render of an html or markdown document. */
export function renderTarget(render: Pick<RenderRecord, 'url'>): string {
  return render.url ?? 'HTML document';
}
