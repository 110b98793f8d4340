// The Shutterbus client (docs/api.md, "The client package"): one object per workspace key pair,
// one method per endpoint, every answer typed and every refusal a ShutterbusError.
import type {
  AsyncAnswer,
  BulkEntry,
  Device,
  Monitor,
  Profile,
  RenderStatus,
  StorageState,
  TakeJsonAnswer,
  Usage,
} from './answers.ts';
import { errorOfAnswer, ShutterbusError } from './errors.ts';
import type { AnimateOptions, TakeOptions } from './options.ts';
import { hmacHex, type OptionValue, signRequest, takeUrl } from './signing.ts';

/** Where the service is and the workspace's keys. */
export interface ShutterbusConfig {
  /** The workspace's access key (`ak_...`). */
  accessKey: string;
  /** The secret key (`sk_...`): with it every request and URL is signed. Keep it on the server. */
  secretKey?: string;
  /** The service's address, e.g. `https://shots.example.com` (without `/api`). */
  baseUrl: string;
  /** How long one call may take before it fails with `timeout_error`; default 120 s. */
  timeoutMs?: number;
}

/** The options of a call that answers with the output itself (no `async`, no `response_type`). */
export type TakeCallOptions = Omit<TakeOptions, 'async' | 'response_type'>;
/** The options of an animation that answers with the output itself. */
export type AnimateCallOptions = Omit<AnimateOptions, 'async' | 'response_type'>;

/** A monitor: any take option, plus its schedule, receiver and what counts as a change (docs/monitors.md). */
export type MonitorOptions = Omit<TakeOptions, 'async' | 'response_type' | 'webhook_url'> & {
  /** Seconds between ticks, at least 60 (or the plan's shortest). */
  interval: number;
  webhook_url: string;
  /** Share of pixels, 0–1, that must change; default 0.01. */
  threshold?: number;
  compare?: 'pixels' | 'text' | 'both';
  ignore_text?: readonly string[];
  min_changed_pixels?: number;
};

/** What a monitor's PATCH may change. */
export interface MonitorPatch {
  status?: 'active' | 'paused';
  interval?: number;
  threshold?: number;
  webhook_url?: string;
}

/** A bulk request (ScreenshotOne's shape): shared `options` overlaid with each request's own. */
export interface BulkRequest {
  options?: TakeOptions;
  requests: readonly TakeOptions[];
  execute?: boolean;
  optimize?: boolean;
}

type Options = Readonly<Record<string, OptionValue>>;

/** One call: method, path, and the query or JSON body it sends. */
interface Call {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: URLSearchParams;
  body?: unknown;
  /** ScreenshotOne's scheme (/api/take, /api/animate) rather than the method and path bound in. */
  takeScheme?: true;
}

/** A client of one Shutterbus workspace. */
export class Shutterbus {
  readonly #accessKey: string;
  readonly #secretKey: string | undefined;
  readonly #baseUrl: string;
  readonly #timeoutMs: number;

  /** Monitors: pages rendered on a schedule, changes announced to a webhook. */
  readonly monitors: {
    create(options: MonitorOptions): Promise<Monitor>;
    list(): Promise<{ monitors: Monitor[] }>;
    get(monitorId: string): Promise<Monitor>;
    update(monitorId: string, patch: MonitorPatch): Promise<Monitor>;
    remove(monitorId: string): Promise<void>;
  };

  /** Profiles: a logged-in browser state that renders can load (`profile=NAME`). */
  readonly profiles: {
    create(profile: { name: string; storage_state: StorageState }): Promise<Profile>;
    list(): Promise<{ profiles: Profile[] }>;
    remove(name: string): Promise<void>;
  };

  constructor(config: ShutterbusConfig) {
    if (typeof config?.accessKey !== 'string' || config.accessKey === '')
      throw new TypeError('Shutterbus: accessKey is required');
    if (typeof config.baseUrl !== 'string' || !/^https?:\/\//.test(config.baseUrl))
      throw new TypeError('Shutterbus: baseUrl must be an http(s) URL, e.g. https://shots.example.com');
    this.#accessKey = config.accessKey;
    this.#secretKey = config.secretKey === '' ? undefined : config.secretKey;
    this.#baseUrl = config.baseUrl.replace(/\/+$/, '').replace(/\/api$/, '');
    this.#timeoutMs = config.timeoutMs ?? 120_000;
    const monitor = (id: string) => `/api/monitors/${encodeURIComponent(id)}`;
    this.monitors = {
      create: (options) => this.#json({ method: 'POST', path: '/api/monitors', body: options }),
      list: () => this.#json({ method: 'GET', path: '/api/monitors' }),
      get: (id) => this.#json({ method: 'GET', path: monitor(id) }),
      update: (id, patch) => this.#json({ method: 'PATCH', path: monitor(id), body: patch }),
      remove: async (id) => void (await this.#send({ method: 'DELETE', path: monitor(id) })),
    };
    this.profiles = {
      create: (profile) => this.#json({ method: 'POST', path: '/api/profiles', body: profile }),
      list: () => this.#json({ method: 'GET', path: '/api/profiles' }),
      remove: async (name) =>
        void (await this.#send({ method: 'DELETE', path: `/api/profiles/${encodeURIComponent(name)}` })),
    };
  }

  /** A GET URL of /api/take, for an `<img src>` or a link: signed when the client has the secret key. */
  signUrl(options: TakeOptions): string {
    return takeUrl(this.#baseUrl, '/api/take', options as Options, this.#accessKey, this.#secretKey);
  }

  /** A GET URL of /api/animate, signed alike. */
  signAnimateUrl(options: AnimateOptions): string {
    return takeUrl(this.#baseUrl, '/api/animate', options as Options, this.#accessKey, this.#secretKey);
  }

  /** Renders and answers the output's bytes (an image, a PDF, a document). */
  async take(options: TakeCallOptions): Promise<Uint8Array> {
    return this.#bytes({ method: 'POST', path: '/api/take', body: options, takeScheme: true });
  }

  /** Renders and answers where the output is (`response_type=json`). */
  async takeJson(options: TakeCallOptions): Promise<TakeJsonAnswer> {
    return this.#json({
      method: 'POST',
      path: '/api/take',
      body: { ...options, response_type: 'json' },
      takeScheme: true,
    });
  }

  /** Queues a render and answers at once; `status(render_id)` or a `webhook_url` tell its end. */
  async takeAsync(options: Omit<TakeOptions, 'async'>): Promise<AsyncAnswer> {
    return this.#json({ method: 'POST', path: '/api/take', body: { ...options, async: true }, takeScheme: true });
  }

  /** Records the page and answers the video's (or GIF's) bytes. */
  async animate(options: AnimateCallOptions): Promise<Uint8Array> {
    return this.#bytes({ method: 'POST', path: '/api/animate', body: options, takeScheme: true });
  }

  /** Queues an animation and answers at once, like takeAsync. */
  async animateAsync(options: Omit<AnimateOptions, 'async'>): Promise<AsyncAnswer> {
    return this.#json({ method: 'POST', path: '/api/animate', body: { ...options, async: true }, takeScheme: true });
  }

  /** The recorded state of a render of this workspace. */
  async status(renderId: string): Promise<RenderStatus> {
    return this.#json({ method: 'GET', path: `/api/renders/${encodeURIComponent(renderId)}` });
  }

  /** Up to 20 requests at once: a signed URL of each, and with `execute` each one's JSON answer. */
  async bulk(request: BulkRequest): Promise<{ responses: BulkEntry[] }> {
    return this.#json({ method: 'POST', path: '/api/bulk', body: request });
  }

  /** This month's quota and the workspace's rate limit. */
  async usage(): Promise<Usage> {
    return this.#json({ method: 'GET', path: '/api/usage' });
  }

  /** Every `viewport_device` preset. */
  async devices(): Promise<{ devices: Device[] }> {
    return this.#json({ method: 'GET', path: '/api/devices' });
  }

  async #json<T>(call: Call): Promise<T> {
    const answer = await this.#send(call);
    return (await answer.json()) as T;
  }

  async #bytes(call: Call): Promise<Uint8Array> {
    const answer = await this.#send(call);
    return new Uint8Array(await answer.arrayBuffer());
  }

  /** Sends one call, signed when the client has the secret key; a non-2xx answer throws ShutterbusError. */
  async #send(call: Call): Promise<Response> {
    const headers: Record<string, string> = { 'x-access-key': this.#accessKey };
    let query = call.query?.toString() ?? '';
    let body: string | undefined;
    if (call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers['content-type'] = 'application/json';
    }
    if (this.#secretKey !== undefined) {
      if (body !== undefined) {
        headers['x-signature'] = call.takeScheme
          ? hmacHex(this.#secretKey, body)
          : signRequest(call.method, call.path, body, this.#secretKey);
      } else {
        const signature = signRequest(call.method, call.path, query, this.#secretKey);
        query = query === '' ? `signature=${signature}` : `${query}&signature=${signature}`;
      }
    }
    const url = `${this.#baseUrl}${call.path}${query === '' ? '' : `?${query}`}`;
    let answer: Response;
    try {
      answer = await fetch(url, { method: call.method, headers, body, signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError';
      throw new ShutterbusError({
        errorCode: timedOut ? 'timeout_error' : 'network_error',
        message: timedOut
          ? `${call.method} ${url}: no answer within ${this.#timeoutMs / 1000} s`
          : `${call.method} ${url}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}`,
        status: 0,
      });
    }
    if (!answer.ok) throw errorOfAnswer(answer.status, await answer.text(), answer.headers.get('x-render-id'));
    return answer;
  }
}
