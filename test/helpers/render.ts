// What the render tests share: Chromium with a warm pool, the local fixture site, a render call
// with test defaults, and pixel reading of the result.
import sharp from 'sharp';
import { BrowserHost, type BrowserHostOptions } from '../../src/render/browser/browser.ts';
import { capturePage } from '../../src/render/capture.ts';
import { renderDefaults, type PageObservation, type RenderOptions } from '../../src/domain/options.ts';
import { startFixtureSite, type FixtureRoute, type FixtureSite } from '../fixtures/site.ts';
import { DEFAULT_CHROMIUM_PATH } from '../../src/config.ts';

/** The browser the service runs, as it finds it: CHROMIUM_PATH (the Makefile's headless shell), else Debian's Chromium. */
export const CHROMIUM = process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;

/** A browser and the fixture site, started together and stopped together. */
export interface RenderRig {
  site: FixtureSite;
  host: BrowserHost;
  /** Renders `path` of the fixture site (or `options.html` / `options.markdown`) for `workspaceId` (null: none, a page of its own). */
  render(path: string, options?: Partial<RenderOptions>, workspaceId?: string | null): Promise<PageObservation>;
  stop(): Promise<void>;
}

/** Starts the fixture site and a browser; `defaults` are laid over the render defaults (timeout 15 s). */
export async function startRenderRig(setup: {
  workspaceId: string;
  defaults?: Partial<RenderOptions>;
  host?: Partial<BrowserHostOptions>;
  /** Pages of the test's own, by path (see startFixtureSite). */
  routes?: Record<string, FixtureRoute>;
}): Promise<RenderRig> {
  const site = await startFixtureSite(setup.routes);
  const host = new BrowserHost({ executablePath: CHROMIUM, poolSize: 1, ...setup.host });
  await host.start();
  const defaults: Omit<RenderOptions, 'url'> = { ...renderDefaults, timeout: 15, ...setup.defaults };
  return {
    site,
    host,
    render(path, options = {}, workspaceId: string | null = setup.workspaceId) {
      const page = options.html !== undefined || options.markdown !== undefined ? {} : { url: site.url + path };
      const signal = new AbortController().signal;
      return capturePage(host, { ...defaults, ...page, ...options }, signal, {
        workspaceId: workspaceId ?? undefined,
      });
    },
    async stop() {
      await host.close();
      await site.close();
    },
  };
}

/** The RGBA colour of one pixel of an image. */
export async function pixel(image: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (y * info.width + x) * info.channels;
  return [...data.subarray(at, at + 4)];
}

/** True when two colours differ by at most `tolerance` in every channel (compression blurs them). */
export function near(actual: number[], expected: number[], tolerance = 12): boolean {
  return expected.every((value, i) => Math.abs(actual[i] - value) <= tolerance);
}
