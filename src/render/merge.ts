// A merge (POST /api/pdf/merge): each source printed to PDF on this worker's browser, a few at a
// time, judged by the render machine's failure rules (its `judge`, handed in) as a render of its
// own, then merged in order into one PDF (one outline, one structure tree) and finished with the
// merge's document operations.
import type { Judge, JudgedObservation } from '../domain/judgement.ts';
import type { RenderLog } from '../domain/render-log.ts';
import { printOptions, sourceOptions, type SourceOptions } from '../domain/merge.ts';
import type { RenderOptions } from '../domain/options.ts';
import type { RenderWarning } from '../domain/warnings.ts';
import { ServiceError } from '../errors.ts';
import type { RenderBrowser } from './browser/browser.ts';
import { capturePage } from './capture.ts';
import { mergePdfs } from './outputs/pdf-document.ts';
import { finishesPdf, finishPdf } from './outputs/pdf-finish.ts';

/** Sources printed at once on one worker: its pages are shared with every other render. */
export const MERGE_PARALLEL = 4;

/** What a source's render leaves the merge: its PDF and warnings, or why it failed. */
type SourceResult = { pdf: Buffer; warnings: RenderWarning[] } | { failure: ServiceError };

/** How a merge's sources are captured: the render's workspace, proxy route and log, and the judge of each source. */
export interface MergeUse {
  workspaceId?: string;
  proxyServer?: string;
  /** The merge's log: its sources mark their steps on it, and the first to fail leaves its failure capture there. */
  log?: RenderLog;
  judge: Judge;
}

/**
 * Prints every source and merges them in order. The merge's `timeout` bounds the whole of it;
 * the first source (in order) to fail fails the merge with its error, and `error_details.source`
 * says which (counted from 0); the sources after it are stopped.
 */
export async function captureMerge(
  host: RenderBrowser,
  options: RenderOptions,
  sources: SourceOptions[],
  signal: AbortSignal,
  { workspaceId, proxyServer, log, judge }: MergeUse,
): Promise<JudgedObservation> {
  const endsAt = Date.now() + options.timeout * 1000;
  const timeout = AbortSignal.timeout(options.timeout * 1000);
  const deadline = AbortSignal.any([signal, timeout]);
  const stops = sources.map(() => new AbortController());
  const results: (SourceResult | undefined)[] = new Array(sources.length);
  let firstFailed = sources.length;

  const render = async (index: number): Promise<SourceResult> => {
    const own = printOptions(sourceOptions(options, sources[index]));
    // A source has what is left of the merge's time, not a timeout of its own.
    const seconds = Math.max(1, Math.floor((endsAt - Date.now()) / 1000));
    const sourceSignal = AbortSignal.any([deadline, stops[index].signal]);
    try {
      const observation = await capturePage(host, { ...own, timeout: seconds }, sourceSignal, {
        workspaceId,
        proxyServer,
        log,
        judge,
      });
      const failure = observation.broken?.failure;
      if (failure)
        return {
          failure: new ServiceError(failure.code, { ...failure.details, source: index }, { message: failure.message }),
        };
      return { pdf: observation.image, warnings: observation.warnings ?? [] };
    } catch (error) {
      if (signal.aborted) throw error;
      // Stopped for a source before it that failed, whose error the merge reports.
      if (stops[index].signal.aborted)
        return { failure: new ServiceError('temporary_unavailable', {}, { cause: error }) };
      if (timeout.aborted) throw new ServiceError('timeout_error', {}, { cause: error });
      if (error instanceof ServiceError)
        return { failure: new ServiceError(error.code, { ...error.details, source: index }, { cause: error }) };
      throw error;
    }
  };

  let next = 0;
  const lane = async () => {
    while (next < sources.length && next < firstFailed) {
      const index = next++;
      const result = await render(index);
      results[index] = result;
      if ('failure' in result && index < firstFailed) {
        firstFailed = index;
        // Only a source before it could still be the first to fail: the rest are stopped.
        for (const stop of stops.slice(index + 1)) stop.abort();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(MERGE_PARALLEL, sources.length) }, lane));
  const first = results[firstFailed];
  if (first && 'failure' in first) throw first.failure;

  const printed = results.map((result) => (result && 'pdf' in result ? result : undefined));
  if (printed.some((result) => result === undefined)) throw new Error('a merge ended with a source not printed');
  let pdf: Buffer;
  try {
    const merged = Buffer.from(await mergePdfs(printed.map((result) => result!.pdf)));
    pdf = finishesPdf(options) ? await finishPdf(merged, options, deadline) : merged;
  } catch (error) {
    if (timeout.aborted && !signal.aborted) throw new ServiceError('timeout_error', {}, { cause: error });
    throw error;
  }
  const warnings = uniqueWarnings(printed.flatMap((result) => result!.warnings));
  return {
    finalUrl: options.url ?? 'about:blank',
    // Each source was judged by the failure rules on its own; the merged file has nothing left to judge.
    mainStatus: null,
    broken: null,
    subRequests: [],
    visibleText: '',
    missingSelectors: [],
    image: pdf,
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

function uniqueWarnings(warnings: RenderWarning[]): RenderWarning[] {
  const seen = new Set<string>();
  return warnings.filter((warning) => !seen.has(warning.code) && seen.add(warning.code));
}
