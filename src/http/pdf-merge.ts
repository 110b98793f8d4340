// POST /api/pdf/merge: several documents (URLs, HTML, Markdown) printed and merged in order into one
// PDF, on the pipeline of /api/take (take.ts, take-flow.ts); charged one render per source
// (docs/capture.md, "Merging PDFs").
import type { FastifyPluginAsync } from 'fastify';
import { pdfDocumentOptions } from '../domain/combinations.ts';
import { MERGE_MAX_SOURCES, sourceDifference, type SourceOptions } from '../domain/merge.ts';
import { parameterByName } from '../domain/parameters.ts';
import { ServiceError } from '../errors.ts';
import { bodyAfterChecks } from './body.ts';
import { parseTakeParams, type ParamProblem, type RawParams, type TakeRequest } from './params.ts';
import { renderHandler } from './take.ts';

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
  app.post('/api/pdf/merge', bodyAfterChecks, merge);
};
