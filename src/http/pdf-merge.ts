// POST /api/pdf/merge: several documents (URLs, HTML, Markdown) printed and merged in order into one
// PDF, on the pipeline of /api/take (take.ts, take-flow.ts); charged one render per source
// (docs/capture.md, "Merging PDFs").
import type { FastifyPluginAsync } from 'fastify';
import { pdfDocumentOptions } from '../domain/pdf.ts';
import { MERGE_MAX_SOURCES, sourceDifference, type SourceOptions } from '../domain/merge.ts';
import { parameterByName } from '../domain/parameters.ts';
import { ServiceError } from '../errors.ts';
import { bodyAfterChecks } from './body.ts';
import { parseTakeParams, type ParamProblem, type RawParams, type TakeRequest } from './params.ts';
import { renderHandler } from './take.ts';
import { contentTypes, formatFacts, formatNames } from '../domain/formats.ts';
import { bodySchema } from './openapi-values.ts';
import { renderCodes, scopedSignatureHeader, takeResponses } from './openapi-answers.ts';
import { routeUrl, type ApiPart, type Json, type Operation } from './operation.ts';

/** A validated merge: the merged file's options and answer (`options`, `control`), and each source's options. */
export interface MergeRequest extends TakeRequest {
  sources: SourceOptions[];
}

/** What a source may not set: how the merge is answered, and what is done once on the merged file. */
const mergeWide = new Set<string>([
  ...[...parameterByName.values()].filter((row) => row.role === 'control').map((row) => row.name),
  ...pdfDocumentOptions,
  'format',
  'timeout',
  'proxy',
  'ip_country_code',
]);

type Params = Record<string, unknown>;

/**
 * Options of one page's render that a merge of several does not take: a profile loaded into (or
 * saved from) one page of many, and files of one page kept beside the merged PDF.
 */
const notOnMerge = new Set(['profile', 'save_profile', 'save_formats']);
const isObject = (value: unknown): value is Params =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Validates a merge's body: a 400 request_not_valid naming every problem, `sources[i].name` for a source's own. */
export function parseMerge(raw: RawParams): MergeRequest {
  const refuse = (error_details: ParamProblem[]) => new ServiceError('request_not_valid', { error_details });
  if (raw.kind !== 'json') throw refuse([{ parameter: 'body', message: 'must be a JSON object' }]);
  const { sources, ...shared } = raw.body;
  if (!Array.isArray(sources) || sources.length < 1 || sources.length > MERGE_MAX_SOURCES)
    throw refuse([{ parameter: 'sources', message: `must be an array of 1 to ${MERGE_MAX_SOURCES} objects` }]);
  const problems: ParamProblem[] = [];
  const add = (problem: ParamProblem) => {
    if (!problems.some((known) => known.parameter === problem.parameter)) problems.push(problem);
  };
  if (shared.format !== undefined && shared.format !== null && shared.format !== 'pdf')
    add({ parameter: 'format', message: 'a merge makes a pdf: give format=pdf or none' });
  for (const name of Object.keys(shared).filter((name) => name.startsWith('metadata_')))
    add({ parameter: name, message: "not on a merge: the merged file has no page's metadata" });
  for (const name of Object.keys(shared).filter((name) => notOnMerge.has(name)))
    add({ parameter: name, message: 'not on a merge: it is for a render of one page' });

  const parsed = sources.map((source: unknown, index) => {
    const at = `sources[${index}]`;
    if (!isObject(source)) {
      add({ parameter: at, message: 'must be a JSON object of /api/take parameters' });
      return undefined;
    }
    for (const name of Object.keys(source)) {
      if (mergeWide.has(name))
        add({ parameter: `${at}.${name}`, message: "is the merge's: give it beside sources, for all of them" });
      else if (name.startsWith('metadata_'))
        add({ parameter: `${at}.${name}`, message: "not on a merge: the merged file has no page's metadata" });
      else if (notOnMerge.has(name))
        add({ parameter: `${at}.${name}`, message: 'not on a merge: it is for a render of one page' });
    }
    const result = parseTakeParams({ kind: 'json', body: { ...shared, ...source, format: 'pdf' } });
    if ('problems' in result) {
      for (const { parameter, message } of result.problems)
        add({ parameter: parameter in source ? `${at}.${parameter}` : parameter, message });
      return undefined;
    }
    return result.request;
  });
  if (problems.length > 0) throw refuse(problems);
  const requests = parsed as TakeRequest[];
  // The merged file's options are the first source's with everything shared: its url names the render.
  const { options, control } = requests[0];
  return { options, control, sources: requests.map((request) => sourceDifference(options, request.options)) };
}

/** The body of a merge: the shared /api/take parameters and the sources, each with its own. */
function mergeBodySchema(): Json {
  const shared = bodySchema();
  return {
    ...shared,
    description: 'The parameters shared by every source, and the sources. null means not given.',
    properties: {
      ...(shared.properties as Json),
      sources: {
        type: 'array',
        minItems: 1,
        maxItems: MERGE_MAX_SOURCES,
        description: 'The documents, in the order they are merged: each a url, html or markdown, with its own options.',
        items: bodySchema(),
      },
    },
    required: ['sources'],
  };
}

/** POST /api/pdf/merge in the OpenAPI document. */
const mergeOperation: Operation = {
  method: 'post',
  path: '/api/pdf/merge',
  operationId: 'pdfMerge',
  summary: 'Merge documents into one PDF',
  tags: ['render'],
  keyed: true,
  errors: renderCodes(),
  detail: () => ({
    description: `Prints 1 to ${MERGE_MAX_SOURCES} documents (each \`sources\` entry a url, html or markdown with its own /api/take options) in parallel and merges them in order into one PDF, with one outline (each source's after the one before) and, where tagged, one structure tree. The other fields of the body are shared by every source, and the merged file's: how it is answered (response_type, async, webhook_url, store…), its \`timeout\` (the whole merge's) and its document operations (pdf_archive, pdf_title, pdf_watermark, pdf_password…), which a source may not set. Charged one screenshot per source; the quota is checked for all of them up front. The first source (in order) that fails fails the merge with its error, \`error_details.source\` naming it (counted from 0). The checks, answers and webhooks of POST /api/take; its X-Signature is over \`POST /api/pdf/merge\`, a newline and the raw body.`,
    parameters: [scopedSignatureHeader],
    requestBody: {
      required: true,
      description: 'At most 1 MiB.',
      content: { 'application/json': { schema: mergeBodySchema() } },
    },
    responses: takeResponses(
      formatNames
        .filter((format) => formatFacts(format).take?.capture === 'pdf')
        .map((format) => ({ format, contentType: contentTypes[format] })),
    ),
  }),
};

/** What /api/pdf/merge adds to the API's description. */
export const pdfMergeApi: ApiPart = { operations: [mergeOperation] };

/** Registers POST /api/pdf/merge; its collaborators are the app's decorators (services.ts). */
export const pdfMergeRoutes: FastifyPluginAsync = async (app) => {
  const merge = renderHandler<MergeRequest>(app, {
    parse: parseMerge,
    // Every source's page obeys the address rules of url.
    targets: ({ options, sources }) =>
      sources.flatMap((source, index): [string, string][] => {
        const url = source.url === undefined ? options.url : (source.url ?? undefined);
        return url === undefined ? [] : [[url, `sources[${index}].url`]];
      }),
    cacheScope: '/api/pdf/merge',
    renderFields: ({ sources }) => ({ kind: 'merge', sources }),
  });
  app.post(routeUrl(mergeOperation), bodyAfterChecks, merge);
};
