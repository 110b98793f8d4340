// Each workspace's latest finished renders in one small KV document, so the dashboard never scans the `renders` bucket.
import type { KV } from '@nats-io/kv';
import { readJson, RememberedWrites } from '../jetstream/kv-json.ts';
import type { RenderRecord } from '../domain/render.ts';

/** What the dashboard shows of one render. */
export type RecentRender = Pick<
  RenderRecord,
  | 'render_id'
  | 'status'
  | 'url'
  | 'format'
  | 'created_at'
  | 'finished_at'
  | 'error_code'
  | 'error_message'
  | 'external_identifier'
  | 'webhook_url'
>;

/** How many renders each workspace keeps in its list. */
export const RECENT_RENDERS_KEPT = 50;

/** The per-workspace list of recent renders in the `recent_renders` bucket. */
export class RecentRenders {
  // Written only at settlement, by the workers: in a small deployment, mostly by one process.
  readonly #writes: RememberedWrites<RecentRender[]>;

  constructor(private readonly bucket: KV) {
    this.#writes = new RememberedWrites(bucket);
  }

  /** Adds a finished render at the top of its workspace's list; a render already listed is not added twice. */
  async note(record: RenderRecord): Promise<void> {
    const entry: RecentRender = {
      render_id: record.render_id,
      status: record.status,
      url: record.url,
      format: record.format,
      created_at: record.created_at,
      ...(record.finished_at ? { finished_at: record.finished_at } : {}),
      ...(record.error_code ? { error_code: record.error_code, error_message: record.error_message } : {}),
      ...(record.external_identifier ? { external_identifier: record.external_identifier } : {}),
      ...(record.webhook_url ? { webhook_url: record.webhook_url } : {}),
    };
    await this.#writes.update(record.workspace_id, (current) => {
      // Redeliveries and replays settle the same render again: list it once.
      if (current?.some((known) => known.render_id === record.render_id)) return undefined;
      return [entry, ...(current ?? [])].slice(0, RECENT_RENDERS_KEPT);
    });
  }

  /** The workspace's latest renders, newest first. */
  async list(workspaceId: string): Promise<RecentRender[]> {
    return (await readJson<RecentRender[]>(this.bucket, workspaceId)).value ?? [];
  }
}
