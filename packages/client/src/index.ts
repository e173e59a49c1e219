export { type PageOptions, Shotsmith, type ShotsmithOptions, type WaitOptions } from './client.ts';
export { type ErrorCode, ShotsmithError } from './errors.ts';
export {
  canonicalQuery,
  encodeRfc3986,
  type LinkOptionValue,
  type LinkParam,
  linkParams,
  type RenderLinkOptions,
  renderLink,
  signQuery,
} from './links.ts';
export type * from './types.ts';
export {
  type BatchCompletedEvent,
  type MonitorChangedEvent,
  type MonitorFailedEvent,
  type ScreenshotEvent,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from './webhooks.ts';
