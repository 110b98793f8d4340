// POST /api/bulk: up to 20 /api/take requests in one, each answered with its signed GET URL and,
// when executed, with its own JSON answer (docs/screenshotone.md, bulk).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.ts';
import { traceCarrier, type TraceCarrier } from '../tracing.ts';
import { hmacHex } from '../signing.ts';
import { planConcurrency } from '../workspaces/workspace.ts';
import { authenticate, type Caller } from './auth.ts';
import { bodyAfterChecks, bodyRefusalOf } from './body.ts';
import { MAX_HEADER_BYTES } from './server.ts';
import { closestName } from './params.ts';
import { parseTake, failureAnswer, takeFlow } from './take-flow.ts';
import { openUrlSecrets, sealUrlSecrets } from './url-secrets.ts';
import { scopedSignatureHeader } from './openapi-answers.ts';
import { jsonContent, keyCodes, ref, routeUrl, transportCodes, type ApiPart, type Operation } from './operation.ts';

/** Most requests one bulk may carry. */
export const BULK_MAX_REQUESTS = 20;

/** How long an executed request waits for a free render slot of its workspace before its 429 stands. */
const SLOT_PATIENCE_MS = 60_000;
const SLOT_RETRY_MS = 500;

const BODY_KEYS = new Set(['access_key', 'options', 'requests', 'execute', 'optimize']);

/**
 * The longest signed URL a lazy bulk entry is given: a fetch of a longer one would be refused
 * (MAX_HEADER_BYTES for the request line and headers), and the rest is left for a client's headers.
 */
const MAX_URL_BYTES = MAX_HEADER_BYTES - 2048;

/** A lazy entry's answer in place when its URL is longer than MAX_URL_BYTES. */
const tooLong = failureAnswer(
  new ServiceError(
    'request_header_too_large',
    {},
    {
      message: `This request's /api/take URL would be longer than ${MAX_URL_BYTES} bytes, more than a request line may carry: send it to /api/take as a POST, or run the bulk with execute=true.`,
    },
  ),
).body;

type Params = Record<string, unknown>;

/** The bulk body, checked as a whole: a 400 naming each malformed part. */
function bulkBody(request: FastifyRequest): { options: Params; requests: Params[]; execute: boolean } {
  const refuse = (parameter: string, message: string) =>
    new ServiceError('request_not_valid', { error_details: [{ parameter, message }] });
  // Unreadable: refused only now, after the caller's checks.
  const refusal = bodyRefusalOf(request);
  if (refusal) throw refusal;
  const fields = request.body as Params;
  const unknown = Object.keys(fields).find((key) => !BODY_KEYS.has(key));
  if (unknown) {
    const closest = closestName(unknown, BODY_KEYS);
    const hint = closest ? `; did you mean \`${closest}\`?` : ' (options, requests, execute, optimize, access_key)';
    throw refuse(unknown, `is not a field of a bulk request${hint}`);
  }
  const isObject = (value: unknown): value is Params =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  const options = fields.options ?? {};
  if (!isObject(options)) throw refuse('options', 'must be a JSON object of /api/take parameters');
  const { requests } = fields;
  if (!Array.isArray(requests) || requests.length < 1 || requests.length > BULK_MAX_REQUESTS) {
    throw refuse('requests', `must be an array of 1 to ${BULK_MAX_REQUESTS} objects`);
  }
  const at = requests.findIndex((entry) => !isObject(entry));
  if (at !== -1) throw refuse(`requests[${at}]`, 'must be a JSON object of /api/take parameters');
  for (const flag of ['execute', 'optimize']) {
    if (fields[flag] !== undefined && typeof fields[flag] !== 'boolean') throw refuse(flag, 'must be true or false');
  }
  return { options, requests: requests as Params[], execute: fields.execute === true };
}

/** One request's parameters as a GET query (lists as repeated keys), without any key or signature of its own. */
function queryOf(params: Params): string {
  const pairs: string[] = [];
  const add = (name: string, value: unknown) =>
    pairs.push(`${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`);
  for (const [name, value] of Object.entries(params)) {
    if (value === null || value === undefined || name === 'access_key' || name === 'signature') continue;
    if (Array.isArray(value)) for (const item of value) add(name, item);
    else add(name, typeof value === 'object' ? JSON.stringify(value) : value);
  }
  return pairs.join('&');
}

/** Runs `work` on every item, at most `limit` at a time, keeping the order of the answers. */
async function inParallel<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/** POST /api/bulk in the OpenAPI document. */
const bulkOperation: Operation = {
  method: 'post',
  path: '/api/bulk',
  operationId: 'bulk',
  summary: `Up to ${BULK_MAX_REQUESTS} renders in one request`,
  tags: ['render'],
  keyed: true,
  errors: [...keyCodes, 'request_body_too_large', 'temporary_unavailable', ...transportCodes],
  detail: () => ({
    description: `Each request is \`options\` overlaid by its own parameters, validated as /api/take validates them. Without execute, each is answered with its signed GET URL only. With execute=true every request is rendered as a fetch of its URL would be (at most the plan's renders in flight at once; each charged as one screenshot) and answered in place; an invalid or failed request carries its error and stops none of the others. The access key as on POST /api/take; X-Signature over \`POST /api/bulk\`, a newline and the raw body.`,
    parameters: [scopedSignatureHeader],
    requestBody: { required: true, description: 'At most 1 MiB.', content: jsonContent(ref('BulkRequest')) },
    responses: { '200': { description: 'One entry per request, in order.', content: jsonContent(ref('BulkAnswer')) } },
  }),
};

/** What /api/bulk adds to the API's description: its operation, its request and its answer. */
export const bulkApi: ApiPart = {
  operations: [bulkOperation],
  schemas: () => ({
    BulkRequest: {
      type: 'object',
      required: ['requests'],
      additionalProperties: false,
      properties: {
        access_key: {
          type: 'string',
          description: 'The access key, when not in the X-Access-Key header or the query.',
        },
        options: { type: 'object', description: '/api/take parameters every request starts from.' },
        requests: {
          type: 'array',
          minItems: 1,
          maxItems: BULK_MAX_REQUESTS,
          items: { type: 'object', description: '/api/take parameters laid over options.' },
        },
        execute: { type: 'boolean', default: false, description: 'Render every request now and answer each in place.' },
        optimize: {
          type: 'boolean',
          default: false,
          description: "Accepted for ScreenshotOne's clients; identical cached requests render once in any case.",
        },
      },
    },
    BulkAnswer: {
      type: 'object',
      required: ['responses'],
      properties: {
        responses: {
          type: 'array',
          description: 'One entry per request, in order.',
          items: {
            type: 'object',
            required: ['url'],
            properties: {
              url: {
                type: 'string',
                format: 'uri',
                description:
                  'The signed /api/take GET URL of the request: nothing is rendered or charged until it is fetched.',
              },
              response: {
                description:
                  'With execute=true (and for an invalid request in any case): the answer response_type=json gives, success or error.',
                oneOf: [ref('TakeJsonAnswer'), ref('AsyncAnswer'), ref('Error')],
              },
            },
          },
        },
      },
    },
  }),
};

/** Registers POST /api/bulk; its collaborators are the app's decorators (services.ts). */
export const bulkRoutes: FastifyPluginAsync = async (app) => {
  const { config, workspaces } = app;
  const flow = takeFlow(app);

  /** A request's signed GET URL, and the part of its query the signature covers (its cache key). */
  const signedUrl = (caller: Caller, params: Params) => {
    const { access_key, secret_key, workspace_id } = caller.workspace;
    // The customer's credentials ride the URL sealed, for this workspace only (url-secrets.ts).
    const query = queryOf(sealUrlSecrets(params, workspace_id, app.sealer));
    const signed = `${query}${query ? '&' : ''}access_key=${encodeURIComponent(access_key)}`;
    return { signed, url: `${config.baseUrl}/api/take?${signed}&signature=${hmacHex(secret_key, signed)}` };
  };

  /** Renders one request as a fetch of its signed URL would, answering as response_type=json does. */
  const renderNow = async (caller: Caller, signed: string, trace?: TraceCarrier): Promise<Record<string, unknown>> => {
    const raw = { kind: 'query' as const, entries: [...new URLSearchParams(signed)] };
    const take = parseTake(openUrlSecrets(raw, caller.workspace.workspace_id, app.sealer));
    const giveUpAt = Date.now() + SLOT_PATIENCE_MS;
    for (;;) {
      try {
        const outcome = await flow.run(
          { workspace: caller.workspace, signedQuery: signed },
          { ...take, control: { ...take.control, response_type: 'json' } },
          undefined,
          // Each executed request's render continues the bulk request's trace (docs/operations.md).
          trace,
        );
        // A cached URL answers as a repeat view of it does: the first view's JSON answer.
        return outcome.kind === 'cached' ? await flow.cachedJson(outcome) : flow.json(outcome).body;
      } catch (err) {
        // The workspace's other renders hold its slots: this request waits its turn, as a client would retry.
        if (err instanceof ServiceError && err.code === 'concurrency_limit_reached' && Date.now() < giveUpAt) {
          await new Promise((resolve) => setTimeout(resolve, SLOT_RETRY_MS));
          continue;
        }
        throw err;
      }
    }
  };

  app.post(routeUrl(bulkOperation), bodyAfterChecks, async (request) => {
    const fields =
      typeof request.body === 'object' && request.body !== null && !Array.isArray(request.body)
        ? (request.body as Params)
        : {};
    const caller = await authenticate(request, { kind: 'json', body: fields }, workspaces);
    const { options, requests, execute } = bulkBody(request);
    const prepared = requests.map((own) => {
      const params = { ...options, ...own };
      const { url, signed } = signedUrl(caller, params);
      try {
        parseTake({
          kind: 'json',
          body: Object.fromEntries(Object.entries(params).filter(([name]) => name !== 'access_key')),
        });
        return { url, signed };
      } catch (err) {
        return { url, signed, refused: failureAnswer(err).body };
      }
    });
    if (!execute) {
      // A URL no fetch could be answered for is refused in place; executed, it renders all the same.
      return {
        responses: prepared.map(({ url, refused }) => {
          const response = refused ?? (Buffer.byteLength(url) - config.baseUrl.length > MAX_URL_BYTES ? tooLong : null);
          return response ? { url, response } : { url };
        }),
      };
    }

    const limit = planConcurrency[caller.workspace.plan];
    const responses = await inParallel(prepared, limit, async ({ url, signed, refused }) => {
      if (refused) return { url, response: refused };
      const response = await renderNow(caller, signed, traceCarrier(request.span)).catch((err) => {
        const answer = failureAnswer(err);
        if (answer.status >= 500 && answer.body.error_code === 'internal_application_error')
          request.log.error({ err }, 'a bulk request failed');
        return answer.body;
      });
      return { url, response };
    });
    return { responses };
  });
};
