// The ingress's collaborators as decorators of the Fastify instance. Route plugins read them
// (`app.renderQueue`, `app.fileStore`, …) instead of importing a bag of dependencies from the app file.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';
import type { RenderQueue } from '../renders/queue.ts';
import type { FileStore } from '../storage/store.ts';
import type { WorkspaceCache } from '../workspaces/cache.ts';
import type { RenderCache } from '../renders/cache.ts';
import type { Settlement } from '../renders/settlement.ts';
import type { Sealer } from '../secrets/sealer.ts';
import type { RepeatViews } from './repeat-views.ts';
import type { ProfileStore } from '../profiles/store.ts';

/** What the API routes use from the rest of the system. */
export interface IngressServices {
  config: Config;
  renderQueue: RenderQueue;
  fileStore: FileStore;
  workspaces: WorkspaceCache;
  settlement: Settlement;
  renderCache: RenderCache;
  /** Validates a target URL against the address rules; throws url_not_allowed / name_not_resolved. */
  checkTarget: (raw: string, parameter: string) => Promise<URL>;
  /** Signed GETs that passed the full checks, answered again before Fastify (repeat-views.ts). */
  repeatViews: RepeatViews;
  /** Seals secrets that ride a request (a storage secret) before they leave the ingress; without it, store=true is refused. */
  sealer?: Sealer;
  /** The workspaces' profiles (/api/profiles, and `profile` checked before a render is queued); without it there are none. */
  profiles?: ProfileStore;
}

declare module 'fastify' {
  // Declared once here; set by `ingressServices` before any route plugin runs.
  interface FastifyInstance extends IngressServices {}
}

/** Decorates the app with the ingress's collaborators; through fastify-plugin, so every route plugin sees them. */
export const ingressServices = fp(
  async (app: FastifyInstance, services: IngressServices) => {
    app.decorate('config', services.config);
    app.decorate('renderQueue', services.renderQueue);
    app.decorate('fileStore', services.fileStore);
    app.decorate('workspaces', services.workspaces);
    app.decorate('settlement', services.settlement);
    app.decorate('renderCache', services.renderCache);
    app.decorate('checkTarget', services.checkTarget);
    app.decorate('repeatViews', services.repeatViews);
    app.decorate('sealer', services.sealer);
    app.decorate('profiles', services.profiles);
  },
  { name: 'shutterbus-ingress-services', fastify: '5.x' },
);
