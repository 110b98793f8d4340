// A render request's capture on this worker's browser: a recording of the page or a screenshot,
// through a proxy route of its own when it asked for one, with the vision API's answer when asked.
import type { Config } from '../config.ts';
import type { CapturePageInput } from '../domain/capture.ts';
import type { JudgedObservation } from '../domain/judgement.ts';
import type { RenderOptions } from '../domain/options.ts';
import { ServiceError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { EgressProxy } from '../net/egress-proxy.ts';
import { upstreamProxyOf } from '../net/upstream.ts';
import { captureAnimation } from './animation.ts';
import type { RenderBrowser } from './browser/browser.ts';
import { capturePage } from './capture.ts';
import { makeOutput } from './outputs/output.ts';
import { withMonitorText } from './outputs/monitor-text.ts';
import { captureMerge } from './merge.ts';
import { askVision } from './outputs/vision.ts';
import type { ProfileUse } from './steps/profile.ts';
import type { ProfileStore } from '../profiles/store.ts';
import { unknownProfile } from '../domain/profile.ts';

/** What capturing a render request needs. */
export interface RequestCaptureDeps {
  config: Pick<Config, 'geoProxies' | 'visionApiUrl' | 'visionModel'>;
  log: Logger;
  browser: RenderBrowser;
  /** The egress proxy the browser is behind: a render with a proxy of its own gets a route on it. */
  egress?: Pick<EgressProxy, 'route' | 'checkTarget'>;
  /** The workspaces' profiles, for renders with profile or save_profile. */
  profiles?: Pick<ProfileStore, 'open' | 'put'>;
}

/**
 * What the render does with profiles: the state of `profile` to load (one deleted since the
 * request was accepted is a 400 naming it), and `save_profile`'s store for the state it ends with.
 */
async function profileUse(
  profiles: RequestCaptureDeps['profiles'],
  options: RenderOptions,
  workspaceId: string,
): Promise<ProfileUse> {
  if (options.profile === undefined && options.save_profile === undefined) return {};
  if (!profiles) throw new Error('a profile was asked for and this worker has no profile store');
  const load = options.profile === undefined ? undefined : await profiles.open(workspaceId, options.profile);
  if (options.profile !== undefined && !load) throw unknownProfile();
  const name = options.save_profile;
  return {
    ...(load ? { load } : {}),
    ...(name !== undefined ? { save: async (state) => void (await profiles.put(workspaceId, name, state)) } : {}),
  };
}

/**
 * request_gpu_rendering on a worker whose browser renders in software: the render goes on in
 * software, or fails with gpu_rendering_failed when fail_if_gpu_rendering_fails. Asked only when requested.
 */
async function requireGpu(browser: RenderBrowser, options: RenderOptions, log: Logger): Promise<void> {
  if (!options.request_gpu_rendering || (await browser.hasGpuRendering())) return;
  if (options.fail_if_gpu_rendering_fails) throw new ServiceError('gpu_rendering_failed');
  log.debug({ gpu: false }, 'GPU rendering asked for; rendering in software');
}

/** The render actor's `capturePage` step on this worker's browser; aborting `signal` ends it and closes the page. */
export function requestCapture(deps: RequestCaptureDeps) {
  const { config, log, browser } = deps;
  return async (
    { options, workspaceId, animation, monitorText, sources, log: renderLog, judge }: CapturePageInput,
    signal: AbortSignal,
  ): Promise<JudgedObservation> => {
    await requireGpu(browser, options, log);
    const profile = await profileUse(deps.profiles, options, workspaceId);
    // A proxy of the customer's or a country's: a route of the egress proxy of its own, chained to it.
    const upstream = upstreamProxyOf(options, config.geoProxies);
    if (upstream && !deps.egress) throw new Error('a proxy was asked for and this worker has no egress proxy');
    const route = upstream ? await deps.egress!.route(upstream) : undefined;
    const proxyServer = route?.url;
    let observation: JudgedObservation;
    try {
      // The render kind of the message: a recording of the page, a merge of documents, or a screenshot (the default).
      observation = animation
        ? await captureAnimation(browser, options, animation, signal, workspaceId, {
            proxyServer,
            checkTarget: deps.egress?.checkTarget,
            profile,
            log: renderLog,
            judge,
          })
        : sources
          ? await captureMerge(browser, options, sources, signal, { workspaceId, proxyServer, log: renderLog, judge })
          : await capturePage(browser, options, signal, {
              workspaceId,
              proxyServer,
              profile,
              log: renderLog,
              judge,
              ...(monitorText ? { make: withMonitorText(makeOutput) } : {}),
            });
    } finally {
      await route?.close();
    }
    if (options.vision_prompt === undefined) return observation;
    // The vision API has the render's timeout to answer; no answer by then is its failure, not ours.
    const answerLimit = AbortSignal.timeout(options.timeout * 1000);
    const vision = await askVision({
      apiUrl: config.visionApiUrl,
      model: config.visionModel,
      prompt: options.vision_prompt,
      maxTokens: options.vision_max_tokens,
      apiKey: options.openai_api_key,
      image: observation.image,
      format: options.format,
      signal: AbortSignal.any([signal, answerLimit]),
    }).catch((error: unknown) => {
      if (!answerLimit.aborted || signal.aborted) throw error;
      throw new ServiceError(
        'vision_failed',
        {
          error_details: [
            { parameter: 'vision_prompt', message: `the vision API did not answer within ${options.timeout} s` },
          ],
        },
        { cause: error },
      );
    });
    return { ...observation, vision };
  };
}
