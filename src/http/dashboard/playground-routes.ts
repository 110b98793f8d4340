// The playground: a form of the most used options; "Render" sends the same signed GET a customer
// would through the app's own /api/take, or /api/animate for an animation (checks, quota, cache and
// errors exactly as theirs), then shows the result at a page URL that holds the mode, the choices
// and the render id, to share with a member.
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hmacHex, scopedPayload } from '../../signing.ts';
import { rawQueryString } from '../auth.ts';
import type { Workspace } from '../../workspaces/workspace.ts';
import type { Dashboard } from './context.ts';
import { takeFormats } from '../../domain/formats.ts';
import { unwritableFormat } from '../../render/outputs/image.ts';
import {
  choicesQuery,
  modeOf,
  readChoices,
  signedTakeUrl,
  snippets,
  type Choices,
  type PlaygroundMode,
} from './playground-request.ts';
import { playgroundPage, type PlaygroundError, type PlaygroundResult } from './views/playground.ts';

const renderIdPattern = /^[0-9a-f-]{36}$/;

/** The formats of the take table this machine's image library cannot write (probed once each). */
async function unwritableFormats(): Promise<ReadonlySet<string>> {
  const reasons = await Promise.all(takeFormats.map((format) => unwritableFormat(format)));
  return new Set(takeFormats.filter((_, index) => reasons[index] !== undefined));
}

/** Registers GET and POST /playground. */
export async function playgroundRoutes(app: FastifyInstance, dashboard: Dashboard): Promise<void> {
  const { baseUrl } = dashboard.config;

  /** A render as the public API describes it to this workspace's key, with its file's size and type. */
  const resultOf = async (
    workspace: Workspace,
    renderId: string,
    cached: boolean,
  ): Promise<PlaygroundResult | PlaygroundError> => {
    const status = await app.inject({
      method: 'GET',
      // Signed (over its method, path and the empty query) like the playground's render, for a workspace that requires it.
      url: `/api/renders/${renderId}?signature=${hmacHex(workspace.secret_key, scopedPayload('GET', `/api/renders/${renderId}`, ''))}`,
      headers: { 'x-access-key': workspace.access_key },
    });
    const record = status.json() as Record<string, string | undefined>;
    if (status.statusCode !== 200)
      return {
        error_code: record.error_code ?? 'not_found',
        error_message: record.error_message ?? 'No render with this id.',
      };
    if (record.status === 'failed')
      return {
        render_id: renderId,
        error_code: record.error_code ?? 'internal_application_error',
        error_message: record.error_message ?? '',
      };
    if (!record.file_url)
      return { render_id: renderId, error_code: 'not_found', error_message: `The render is ${record.status}.` };
    const file = await app.inject({ method: 'HEAD', url: record.file_url.slice(dashboard.config.filesBaseUrl.length) });
    const ms = record.finished_at ? Date.parse(record.finished_at) - Date.parse(record.created_at!) : undefined;
    return {
      render_id: renderId,
      file_url: record.file_url,
      content_type: String(file.headers['content-type'] ?? ''),
      size_bytes: Number(file.headers['content-length'] ?? 0),
      render_ms: ms,
      cached,
    };
  };

  const page = async (
    request: FastifyRequest,
    mode: PlaygroundMode,
    choices: Choices,
    result?: PlaygroundResult | PlaygroundError,
  ) => {
    const { viewer, workspace } = request.signedIn;
    const signed = signedTakeUrl(baseUrl, choices, workspace, mode);
    return playgroundPage({
      viewer,
      mode,
      choices,
      result,
      signedUrl: signed.url,
      code: snippets(baseUrl, choices, workspace.access_key, signed.url, mode),
      unwritable: await unwritableFormats(),
    }).text;
  };

  app.get('/playground', async (request, reply) => {
    const query = new URLSearchParams(rawQueryString(request));
    const mode = modeOf(query.get('mode'));
    const choices = readChoices((name) => query.getAll(name), mode);
    const renderId = query.get('result');
    const result =
      renderId && renderIdPattern.test(renderId)
        ? await resultOf(request.signedIn.workspace, renderId, query.get('cached') === 'true')
        : undefined;
    return reply.type('text/html; charset=utf-8').send(await page(request, mode, choices, result));
  });

  // Renders, then sends the browser to the result's own URL (post/redirect/get), or shows the refusal.
  app.post('/playground', async (request, reply) => {
    const form = request.body as Record<string, string | undefined>;
    const mode = modeOf(form.mode);
    const choices = readChoices((name) => (form[name] === undefined ? [] : [form[name]!]), mode);
    const { workspace } = request.signedIn;
    // As a stream: the page links to the stored file, so the output (a video, maybe) is not read here.
    const answer = await app.inject({
      method: 'GET',
      url: signedTakeUrl(baseUrl, choices, workspace, mode).path,
      payloadAsStream: true,
    });
    const refused = (answer.headers['content-type'] ?? '').toString().includes('json');
    const body = refused ? await text(answer.stream()) : (answer.stream().resume(), '');
    const renderId = String(answer.headers['x-render-id'] ?? '');
    const rendered = answer.statusCode === 200 || answer.statusCode === 302;
    if (renderIdPattern.test(renderId) && (rendered || (await resultOf(workspace, renderId, false)).render_id)) {
      const cached = answer.statusCode === 302 ? '&cached=true' : '';
      const shared = [mode === 'animate' ? 'mode=animate' : '', choicesQuery(choices)].filter(Boolean).join('&');
      return reply.redirect(`/dashboard/playground?${shared}${shared ? '&' : ''}result=${renderId}${cached}`, 303);
    }
    // Refused before a render was recorded (request_not_valid, quota, rate, keys): the API's own answer.
    const refusal = refused ? (JSON.parse(body) as Record<string, unknown>) : {};
    const error: PlaygroundError = {
      error_code: String(refusal.error_code ?? 'internal_application_error'),
      error_message: String(refusal.error_message ?? 'The render could not be started.'),
      ...(Array.isArray(refusal.error_details)
        ? { error_details: refusal.error_details as { parameter?: string; message?: string }[] }
        : {}),
    };
    return reply
      .code(answer.statusCode >= 500 ? 502 : 200)
      .type('text/html; charset=utf-8')
      .send(await page(request, mode, choices, error));
  });
}

/** The whole of a (small: an error's) answer as text. */
async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
