// What the service answers each call with (docs/api.md); fields beyond these are kept as they come.

/** `response_type=json`: where the output is and what it is. */
export interface TakeJsonAnswer {
  is_successful: true;
  render_id: string;
  file_url: string;
  /** ScreenshotOne's name of file_url. */
  screenshot_url?: string;
  format: string;
  size_bytes: number;
  [field: string]: unknown;
}

/** `async=true`: the render is queued; `status(render_id)` follows it. */
export interface AsyncAnswer {
  is_successful: true;
  render_id: string;
  status: 'pending';
  status_url: string;
  [field: string]: unknown;
}

/** `GET /api/renders/{id}`: the recorded state of a render. */
export interface RenderStatus {
  render_id: string;
  status: 'pending' | 'rendering' | 'succeeded' | 'failed';
  file_url?: string;
  error_code?: string;
  error_message?: string;
  external_identifier?: string;
  created_at: string;
  finished_at?: string;
  timeline?: { step: string; at: string; ms: number }[];
  [field: string]: unknown;
}

/** One request of a bulk: its signed URL and, with `execute`, its own JSON answer (success or error). */
export interface BulkEntry {
  url: string;
  response?: Record<string, unknown>;
}

/** `GET /api/usage`: this month's quota and the rate limit, in ScreenshotOne's shape. */
export interface Usage {
  total: number;
  available: number;
  used: number;
  concurrency: { limit: number; remaining: number; reset: number };
}

/** One `viewport_device` preset of `GET /api/devices`. */
export interface Device {
  id: string;
  name: string;
  viewport: { width: number; height: number };
  device_scale_factor: number;
  is_mobile: boolean;
  has_touch: boolean;
  user_agent: string;
}

/** A monitor as the service describes it. */
export interface Monitor {
  monitor_id: string;
  status: 'active' | 'paused';
  interval: number;
  threshold: number;
  webhook_url: string;
  next_run_at: string;
  last_run_at?: string;
  last_file_url?: string;
  changes?: Record<string, unknown>[];
  [field: string]: unknown;
}

/** Playwright's storage state: what a profile holds. */
export interface StorageState {
  cookies: Record<string, unknown>[];
  origins: { origin: string; localStorage: { name: string; value: string }[] }[];
}

/** A stored profile, as listed (its state is never returned). */
export interface Profile {
  name: string;
  origins: string[];
  created_at: string;
  [field: string]: unknown;
}
