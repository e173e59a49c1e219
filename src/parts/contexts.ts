/**
 * The domain's contexts that no one part owns: what every use case is given, what a capture
 * adds to it, and the demo's allowance on top. Assembled from what the parts give; they open
 * nothing, so they are no parts themselves.
 */
import { createS3DestinationWriter } from '../adapters/destinations/s3-destination.ts';
import type { EgressPolicy } from '../adapters/egress/policy.ts';
import type { Config } from '../config/config.ts';
import { BOUNDS } from '../domain/bounds.ts';
import { credentialDigest } from '../domain/captures/capture-options.ts';
import type { CaptureContext, FlightResult, TargetGuard } from '../domain/captures/ports.ts';
import { ProxyDirectory } from '../domain/captures/proxy-directory.ts';
import type { Renderer } from '../domain/captures/renderer.ts';
import { RequestResolutions } from '../domain/captures/request-resolutions.ts';
import type { DomainContext } from '../domain/context.ts';
import type { ImageStorage } from '../domain/image-storage.ts';
import { demoAllowance, type PlanTable } from '../domain/plans.ts';
import { QuotaHolds } from '../domain/quota/quota-holds.ts';
import type { RevocationBus } from '../domain/revocations.ts';
import type { Store } from '../domain/store.ts';
import type { HttpDeps } from '../http/types.ts';
import { ForegroundRenders } from '../lib/foreground.ts';
import type { SecretDeriver } from '../lib/server-secret.ts';
import { SingleFlight } from '../lib/single-flight.ts';
import { type Clock, MINUTE_MS } from '../lib/time.ts';
import type { SharedState } from './shared-state.ts';

/** What every use case may depend on, and the revocation events. */
export function domainContext(options: {
  config: Config['quota'];
  store: Store;
  clock: Clock;
  plans: PlanTable;
  secrets: SecretDeriver;
  shared: SharedState;
}): DomainContext & { revocations: RevocationBus } {
  const { config, store, clock, shared } = options;
  const { counters } = shared;
  const loginCounter = (name: string, limit: number) =>
    counters.create({ name, limit, windowMs: BOUNDS.account.loginWindowMs });
  return {
    store,
    clock,
    plans: options.plans,
    quotaHolds: new QuotaHolds({ store: store.quota, clock, leaseMs: config.holdLeaseMs }),
    counters,
    secrets: options.secrets,
    revocations: shared.revocations,
    loginThrottle: {
      byEmail: loginCounter('login-email', BOUNDS.account.loginFailuresPerEmail),
      byIp: loginCounter('login-ip', BOUNDS.account.loginFailuresPerIp),
    },
  };
}

/** What a capture needs beyond that: the renderer, the guard, storage and the render locks. */
export function captureContext(options: {
  config: Pick<Config, 'server' | 'render'>;
  ctx: DomainContext & { revocations: RevocationBus };
  browser: { renderer: Renderer; guard: TargetGuard; webhookPolicy: EgressPolicy };
  storage: ImageStorage;
  shared: SharedState;
}): CaptureContext {
  const { config, ctx, browser } = options;
  const proxies = new ProxyDirectory(
    config.render.proxies.map((p) => ({
      id: p.id,
      countries: p.countries,
      remoteDns: p.remoteDns,
    })),
  );
  return {
    ...ctx,
    renderer: browser.renderer,
    storage: options.storage,
    guard: browser.guard,
    resolutions: new RequestResolutions({
      guard: browser.guard,
      digest: credentialDigest(ctx.secrets),
      proxies,
    }),
    proxies,
    // Customers' buckets are reached under the webhooks' egress rules (and lookup bound).
    destinationWriter: createS3DestinationWriter(browser.webhookPolicy),
    flights: new SingleFlight<FlightResult>(),
    renderLocks: options.shared.renderLocks,
    publicUrl: config.server.publicUrl.origin,
    renderTimeoutMs: config.render.timeoutMs,
    foreground: new ForegroundRenders(),
  };
}

/** The landing page's demo: a capture with its day's and hour's allowance. */
export function demoContext(capture: CaptureContext): HttpDeps['demo'] {
  const allowance = demoAllowance(capture.plans);
  return {
    ...capture,
    demoCounter: capture.counters.create({
      name: 'demo',
      limit: allowance.perDay,
      windowMs: 24 * 60 * MINUTE_MS,
    }),
    demoRequests: capture.counters.create({
      name: 'demo-requests',
      limit: allowance.perHour,
      windowMs: 60 * MINUTE_MS,
    }),
  };
}
