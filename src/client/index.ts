// @shutterbus/client: render, sign and verify against a Shutterbus service (docs/api.md, "The client
// package"). Only Node's own modules; Node 20 or later.
export { Shutterbus } from './client.ts';
export type {
  AnimateCallOptions,
  BulkRequest,
  MonitorOptions,
  MonitorPatch,
  ShutterbusConfig,
  TakeCallOptions,
} from './client.ts';
export type {
  AsyncAnswer,
  BulkEntry,
  Device,
  Monitor,
  Profile,
  RenderStatus,
  StorageState,
  TakeJsonAnswer,
  Usage,
} from './answers.ts';
export { ShutterbusError, type ErrorDetail } from './errors.ts';
export type { AnimateOptions, TakeOptions } from './options.ts';
export { signRequest } from './signing.ts';
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookInput,
  type WebhookEvent,
  type WebhookHeaders,
} from './webhook.ts';
