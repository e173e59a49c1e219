import type { ForegroundRenders } from '../../lib/foreground.ts';
import type { SingleFlight } from '../../lib/single-flight.ts';
import type { DomainContext } from '../context.ts';
import type { DestinationWriter } from '../destinations/ports.ts';
import type { AppError } from '../errors.ts';
import type { ImageStorage } from '../image-storage.ts';
import type { RevocationBus } from '../revocations.ts';
import type { ScreenshotRecord } from '../store.ts';
import { CONTENT_FILES, type ContentKind } from './formats.ts';
import type { ProxyDirectory } from './proxy-directory.ts';
import type { Renderer } from './renderer.ts';
import type { RequestResolutions } from './request-resolutions.ts';

/** Decides whether a URL may be fetched (docs/egress.md), before any browser time. */
export interface TargetGuard {
  /** Shape and scheme: AppError invalid_request / url_not_allowed. */
  parse(raw: unknown): URL;
  /**
   * Port and any address known without DNS (literals in every encoding, `localhost`):
   * AppError url_not_allowed. A validation step, so it costs no quota.
   */
  screen(url: URL): void;
  /**
   * The full address check, resolving the name once: AppError url_not_allowed /
   * target_unreachable. Run right before a render (a cache hit needs no lookup). `client`
   * (`user:<id>`, or `demo:<ip>` with IPv6 by /64) is whose bound of DNS lookups in flight
   * the lookup counts against, so one client's slow names never delay another's.
   */
  check(url: URL, client: string): Promise<void>;
  /**
   * The caller's own proxy (`proxy` URL) judged like a target, its messages naming `proxy`:
   * `screenProxy` without DNS (a validation step), `checkProxy` resolving the name, right
   * before a render. AppError url_not_allowed / target_unreachable.
   */
  screenProxy(host: string, port: number): void;
  checkProxy(host: string, port: number, client: string): Promise<void>;
}

/**
 * A rendered record with its image, or (renderMs and image null) one another node rendered
 * while this one waited.
 */
export type Rendered = ScreenshotRecord & { renderMs: number | null; image: Buffer | null };

/**
 * A render its leader could not pay for (a signed link whose account has no unit left),
 * as a value: requests that joined it decide for themselves (run-capture.ts, `perRender`).
 */
export interface Unpaid {
  unpaid: AppError;
}

/** What one render per cache key gives every request that joined it. */
export type FlightResult = Rendered | Unpaid;

/** Held while this node renders a cache key; released when the record is written or the render failed. */
export interface RenderLease {
  release(): Promise<void>;
}

/**
 * Cross-node exclusivity of one render per cache key (Redis `SET NX PX`, adapters/locks).
 * One node needs none: its in-process SingleFlight already joins identical requests.
 */
export interface RenderLocks {
  /** A lease when this node may render `key`; null while another node holds it. */
  acquire(key: string, ttlMs: number): Promise<RenderLease | null>;
  /** Whether some node holds `key` now. */
  held(key: string): Promise<boolean>;
}

export interface CaptureContext extends DomainContext {
  renderer: Renderer;
  storage: ImageStorage;
  guard: TargetGuard;
  /** Recent requests' resolutions (URL, option rules, cache key), keyed by request. */
  resolutions: RequestResolutions;
  /** The operator's proxies a capture may name (PROXIES_FILE). */
  proxies: ProxyDirectory;
  /** Writes into the accounts' own buckets (storage destinations). */
  destinationWriter: DestinationWriter;
  revocations: RevocationBus;
  /** Identical captures in flight on this node run once. */
  flights: SingleFlight<FlightResult>;
  /** ... and across nodes. */
  renderLocks: RenderLocks;
  /** Origin of hosted image URLs. */
  publicUrl: string;
  renderTimeoutMs: number;
  /** This node's synchronous renders in flight: queued work waits for a quiet moment. */
  foreground: ForegroundRenders;
}

export const imageUrl = (
  ctx: { publicUrl: string },
  record: Pick<ScreenshotRecord, 'token' | 'ext'>,
): string => `${ctx.publicUrl}/images/${record.token}.${record.ext}`;

/** Where one kind of a record's content is hosted: beside its image, the same token. */
export const contentUrl = (
  ctx: { publicUrl: string },
  record: Pick<ScreenshotRecord, 'token'>,
  kind: ContentKind,
): string => `${ctx.publicUrl}/images/${record.token}.${CONTENT_FILES[kind].ext}`;
