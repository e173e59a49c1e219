import { LRUCache } from 'lru-cache';
import { deepFreeze } from '../../lib/deep-freeze.ts';
import type { Plan } from '../plans.ts';
import { type CaptureInput, cacheKeyFor, resolveCaptureOptions } from './capture-options.ts';
import { captureTarget } from './capture-target.ts';
import type { CredentialDigest, StorageRequest } from './options/define.ts';
import type { TargetGuard } from './ports.ts';
import { callerProxyHost, type ProxyDirectory } from './proxy-directory.ts';
import { isProxyUrl } from './proxy-url.ts';
import type { RenderOptions } from './renderer.ts';

/** What a capture request resolves to before its cache lookup. */
export interface Resolution {
  /**
   * The address the egress rules check before the render: the url, or a document's base_url;
   * null for a document without one (nothing is fetched for it).
   */
  url: URL | null;
  /** Frozen: one object serves every repeat of the request. */
  render: Readonly<RenderOptions>;
  fresh: boolean;
  cacheTtlMs: number;
  cacheKey: string;
  /** Where a copy goes (`storage`); null: nowhere. */
  storage: StorageRequest | null;
}

/** Resolutions kept per plan, at most... */
const MAX_ENTRIES = 1_000;
/**
 * ...and at most this many characters of keys: with the render options, which hold about as
 * much again, about 4 MiB per plan whatever the requests. A longer request is not kept.
 */
const MAX_KEY_CHARS_IN_ALL = 1_000_000;
const MAX_KEY_CHARS = 4_096;

/**
 * Requests that carry credentials for the target (HTTP auth, cookies, headers) are not
 * kept: their secrets live no longer than their request.
 */
const keepable = (input: CaptureInput): boolean =>
  input.http_auth === undefined &&
  input.cookies === undefined &&
  input.headers === undefined &&
  (input.proxy === undefined || !isProxyUrl(input.proxy)) &&
  !stringsLongerThan(input, MAX_KEY_CHARS);

/**
 * Whether the strings in `value` hold more than `limit` characters together: its JSON holds
 * more still, so a body this long is not kept and its key is never built (stringifying a
 * 96 KiB body of styles and scripts took 130 to 250 us, four times its parse).
 */
function stringsLongerThan(value: unknown, limit: number): boolean {
  let left = limit;
  const over = (v: unknown): boolean => {
    if (typeof v === 'string') {
      left -= v.length;
      return left < 0;
    }
    return v !== null && typeof v === 'object' && Object.values(v).some(over);
  };
  return over(value);
}

/**
 * A request's URL parsed, its plan's option rules applied and its cache key are a function
 * of the request body, the cache owner and the plan alone, and clients repeat requests
 * (that is what the result cache is for), so the node keeps the last resolutions and a
 * repeat skips them (about a fifth of a cache hit's CPU). Only resolutions that succeeded
 * are kept: a refused request runs its rules again and answers the same error. The URL's
 * screen (port, literal addresses) runs on every request: the machine's own addresses,
 * which it refuses, change at run time.
 */
export class RequestResolutions {
  readonly #byPlan = new WeakMap<Readonly<Plan>, LRUCache<string, Resolution>>();
  readonly #guard: TargetGuard;
  readonly #digest: CredentialDigest;
  readonly #proxies: ProxyDirectory;

  /**
   * `digest`: what credentials enter cache keys as (capture-options.ts, credentialDigest);
   * `proxies`: the operator's proxies a request may name.
   */
  constructor(parts: { guard: TargetGuard; digest: CredentialDigest; proxies: ProxyDirectory }) {
    this.#guard = parts.guard;
    this.#digest = parts.digest;
    this.#proxies = parts.proxies;
  }

  resolve(input: CaptureInput, options: { plan: Readonly<Plan>; cacheOwner: string }): Resolution {
    const { plan, cacheOwner } = options;
    const memoKey = keepable(input) ? `${cacheOwner}\n${JSON.stringify(input)}` : null;
    let memo = this.#byPlan.get(plan);
    const kept = memoKey === null ? undefined : memo?.get(memoKey);
    if (kept !== undefined) {
      if (kept.url !== null) this.#guard.screen(kept.url);
      return kept;
    }
    const resolution = this.#resolveAnew(input, plan, cacheOwner);
    if (memoKey !== null) {
      if (memo === undefined) {
        // A key over maxEntrySize is not stored (keys, quotes and escapes count there too).
        memo = new LRUCache({
          max: MAX_ENTRIES,
          maxSize: MAX_KEY_CHARS_IN_ALL,
          maxEntrySize: MAX_KEY_CHARS,
          sizeCalculation: (_value, key) => key.length,
        });
        this.#byPlan.set(plan, memo);
      }
      memo.set(memoKey, resolution);
    }
    return resolution;
  }

  #resolveAnew(input: CaptureInput, plan: Readonly<Plan>, cacheOwner: string): Resolution {
    const target = captureTarget(this.#guard, input);
    const { render, fresh, cacheTtlMs, storage } = resolveCaptureOptions(
      input,
      target.navigation,
      plan,
    );
    if (target.checked !== null) this.#guard.screen(target.checked);
    this.#proxies.check(render.proxy);
    const proxyHost = callerProxyHost(render.proxy);
    if (proxyHost !== null) this.#guard.screenProxy(proxyHost.host, proxyHost.port);
    return {
      url: target.checked,
      render: deepFreeze(render),
      fresh,
      cacheTtlMs,
      cacheKey: cacheKeyFor(cacheOwner, { ...render, cacheTtlMs }, this.#digest),
      storage,
    };
  }
}
