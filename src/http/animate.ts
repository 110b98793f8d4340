// GET|POST /api/animate: an animated capture (a video or a gif of the page playing or scrolling),
// on the pipeline of /api/take (take.ts, take-flow.ts) with a parameter table of its own (docs/animate.md).
import type { FastifyPluginAsync } from 'fastify';
import {
  animateParameters,
  animateRefusals,
  recordingParameters,
  sharedParameters,
  type AnimationFormat,
  type AnimationOptions,
} from '../domain/animation.ts';
import { defaultsOf, givenOf, rowsOfRole } from '../domain/parameters.ts';
import type { RenderOptions } from '../domain/options.ts';
import {
  pageOptions,
  parseParameters,
  type ParamProblem,
  type ParameterTable,
  type RawParams,
  type TakeControl,
  type TakeRequest,
} from './params.ts';
import { ServiceError } from '../errors.ts';
import { registerRenderEndpoint, renderHandler } from './take.ts';
import { parameterGroups } from './openapi-values.ts';
import { renderOperations } from './openapi-answers.ts';
import { routeUrl, type ApiPart } from './operation.ts';

/** A validated /api/animate request: the page, the recording, and how to answer. */
export interface AnimateRequest extends TakeRequest {
  animation: AnimationOptions;
}

/** The table of /api/animate. */
export const animateTable: ParameterTable = {
  byName: new Map(animateParameters.map((p) => [p.name, p])),
  refusals: animateRefusals,
};

// The page options and the control rows are /api/take's own rows; the recording's are its own.
const pageRows = rowsOfRole(sharedParameters, 'option');
const controlRows = rowsOfRole(sharedParameters, 'control');
const recordingDefaults = defaultsOf(recordingParameters);
const animateControlDefaults = defaultsOf(controlRows);

/** Seconds an animation may take in all when `timeout` is not given: the longest recording and a page's load. */
const ANIMATION_TIMEOUT = 60;

/** Parses and validates every parameter of /api/animate; returns all problems at once. */
export function parseAnimateParams(raw: RawParams): { request: AnimateRequest } | { problems: ParamProblem[] } {
  const parsed = parseParameters(raw, animateTable);
  if ('problems' in parsed) return parsed;
  const { values } = parsed;
  const page = givenOf(values, pageRows);
  const options: RenderOptions = {
    ...pageOptions(page),
    timeout: page.timeout ?? ANIMATION_TIMEOUT,
    format: (values.format as AnimationFormat | undefined) ?? 'mp4',
  };
  const { scenario, ...recording } = { ...recordingDefaults, ...givenOf(values, recordingParameters) };
  // ScreenshotOne's schema takes an empty scenario as the default one.
  const animation: AnimationOptions = { ...recording, scenario: scenario === '' ? 'default' : scenario };
  const control: TakeControl = { ...animateControlDefaults, ...givenOf(values, controlRows) };
  return { request: { options, animation, control } };
}

/** GET and POST /api/animate in the OpenAPI document, with its table's groups. */
const animateOperations = renderOperations(
  'animate',
  'Record a page',
  () =>
    `Records the page as a video or a gif: as it plays (scenario=default) or scrolled down and back (scenario=scroll), at 25 frames per second, charged as one screenshot. The checks, signatures, cache, async answers and webhooks of /api/take, and its page, request and blocking parameters. A bad or unknown parameter, or a refused combination, is \`400 request_not_valid\` naming each offending parameter.\n\n${parameterGroups(animateParameters)}`,
  animateParameters,
);

/** What /api/animate adds to the API's description. */
export const animateApi: ApiPart = { operations: [animateOperations.get, animateOperations.post] };

/** Registers GET and POST /api/animate; its collaborators are the app's decorators (services.ts). */
export const animateRoutes: FastifyPluginAsync = async (app) => {
  const animate = renderHandler<AnimateRequest>(app, {
    // ScreenshotOne's scheme, as on /api/take: the query string or body alone is signed.
    signatures: 'query',
    parse: (raw) => {
      const parsed = parseAnimateParams(raw);
      if ('problems' in parsed) throw new ServiceError('request_not_valid', { error_details: parsed.problems });
      return parsed.request;
    },
    // A navigation during the scroll goes where url may go.
    targets: ({ animation }) =>
      animation.scroll_try_navigate && animation.scroll_navigate_to_url
        ? [[animation.scroll_navigate_to_url, 'scroll_navigate_to_url']]
        : [],
    cacheScope: '/api/animate',
    renderFields: ({ animation }) => ({ kind: 'animation', animation }),
    // A mov of 30 s is hundreds of MB: it goes from the store to the caller without a stop in memory.
    streamsFiles: true,
  });
  registerRenderEndpoint(app, routeUrl(animateOperations.get), animate);
};
