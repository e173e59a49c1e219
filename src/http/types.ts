import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { Config } from '../config/config.ts';
import type { BillingContext, LocalBillingPages } from '../domain/billing/ports.ts';
import type { CaptureContext } from '../domain/captures/ports.ts';
import type { DomainContext } from '../domain/context.ts';
import type { ImageStorage } from '../domain/image-storage.ts';
import type { JobContext } from '../domain/jobs/ports.ts';
import type { WindowCounter } from '../domain/limits.ts';
import type { MonitorContext } from '../domain/monitors/ports.ts';
import type { RevocationBus } from '../domain/revocations.ts';
import type { apiKeyHook } from './auth.ts';
import type { SessionCookiePolicy } from './cookie-policy.ts';
import type { RateLimits } from './rate-limit.ts';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * What the HTTP layer is given by the composition root (src/deps.ts): configuration, the
 * domain's contexts and the ports its routes read. Nothing here names an adapter.
 */
export interface HttpDeps {
  config: Config;
  ctx: DomainContext & { revocations: RevocationBus };
  capture: CaptureContext;
  /** The capture context with the job queue (async captures). */
  jobs: JobContext;
  /** The capture context with the image comparer (monitors). */
  monitors: MonitorContext;
  demo: CaptureContext & { demoCounter: WindowCounter; demoRequests: WindowCounter };
  storage: ImageStorage;
  metrics: HttpMetrics;
  billing: {
    ctx: BillingContext;
    /** The built-in test provider's pages, when it is the provider in use. */
    local: LocalBillingPages | null;
  };
  /** What GET /readyz asks. */
  readiness: ReadonlyArray<ReadinessCheck>;
}

/** One dependency GET /readyz asks about: `check` throws while it is not usable. */
export interface ReadinessCheck {
  name: string;
  check: () => Promise<void>;
}

/** What the routes are given: HttpDeps and the hooks and policies buildApp builds on them. */
export interface RouteDeps extends HttpDeps {
  apiKeyHook: ReturnType<typeof apiKeyHook>;
  rateLimits: RateLimits;
  /** The session cookie's SameSite and Secure flags (cookie-policy.ts). */
  sessionCookie: SessionCookiePolicy;
  /** Origins whose cookie-authenticated requests are accepted (the dashboard's and our own). */
  dashboardOrigins: ReadonlySet<string>;
}

/** The metrics the HTTP layer records and serves (adapters/metrics implements them). */
export interface HttpMetrics {
  refused(reason: 'quota' | 'rate' | 'demo' | 'ssrf' | 'login'): void;
  requests: { inc(labels: { route: string; method: string; status: string }): void };
  captureSeconds: { observe(labels: { cache: string }, seconds: number): void };
  registry: { readonly contentType: string; metrics(): Promise<string> };
}
