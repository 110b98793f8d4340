// The ingress app without a stack, for tests of routes that reach no render collaborator (the
// OpenAPI document, health, paths, proxies, key refusals): those collaborators are empty stubs.
import type { Config } from '../../src/config.ts';
import { buildApp, type AppDeps } from '../../src/http/app.ts';
import { createLogger } from '../../src/log.ts';

/** buildApp with `config`, stubs for the render queue, store, workspaces, settlement and cache, and `deps` on top. */
export function appWithoutRenders(config: Config, deps: Partial<AppDeps> = {}): ReturnType<typeof buildApp> {
  const stub = {} as never;
  return buildApp({
    config,
    log: createLogger(config),
    renderQueue: stub,
    fileStore: stub,
    workspaces: stub,
    settlement: stub,
    renderCache: stub,
    checkTarget: async (raw: string) => new URL(raw),
    readiness: [],
    ...deps,
  });
}
