import type { FastifyReply, FastifyRequest } from 'fastify';
import { BOUNDS } from '../domain/bounds.ts';
import type { DomainContext } from '../domain/context.ts';
import { AppError } from '../domain/errors.ts';
import type { WindowCounter, WindowState } from '../domain/limits.ts';
import type { PlanName } from '../domain/plans.ts';
import { requireAccount, requireApiKey } from './auth.ts';

/**
 * Per-minute counters per account (shared by all its keys), one per plan so a plan
 * change applies its own limit on the very next request.
 */
export class RateLimits {
  private readonly capture = new Map<PlanName, WindowCounter>();
  private readonly links = new Map<PlanName, WindowCounter>();
  private readonly other: WindowCounter;
  private readonly sessionReads: WindowCounter;
  private readonly sessionChanges: WindowCounter;
  private readonly ctx: DomainContext;

  constructor(ctx: DomainContext) {
    this.ctx = ctx;
    this.other = ctx.counters.create({
      name: 'api-other',
      limit: BOUNDS.rates.otherEndpointsPerMinute,
      windowMs: BOUNDS.rates.windowMs,
    });
    this.sessionReads = ctx.counters.create({
      name: 'session-read',
      limit: BOUNDS.rates.otherEndpointsPerMinute,
      windowMs: BOUNDS.rates.windowMs,
    });
    this.sessionChanges = ctx.counters.create({
      name: 'session-change',
      limit: BOUNDS.rates.sessionChangesPerMinute,
      windowMs: BOUNDS.rates.windowMs,
    });
  }

  captureCounter(plan: PlanName): WindowCounter | null {
    return this.perPlan(this.capture, 'capture', plan, this.ctx.plans[plan].rate_per_minute);
  }

  /** Signed render links: per key, apart from the account's capture rate. */
  linkCounter(plan: PlanName): WindowCounter | null {
    const limit = this.ctx.plans[plan].link_requests_per_minute;
    return this.perPlan(this.links, 'link', plan, limit);
  }

  private perPlan(
    counters: Map<PlanName, WindowCounter>,
    name: string,
    plan: PlanName,
    limit: number | null,
  ): WindowCounter | null {
    if (limit === null) return null;
    let counter = counters.get(plan);
    if (!counter) {
      counter = this.ctx.counters.create({
        name: `${name}-${plan}`,
        limit,
        windowMs: BOUNDS.rates.windowMs,
      });
      counters.set(plan, counter);
    }
    return counter;
  }

  /** onRequest hook for POST /v1/screenshots (after the API-key hook). */
  captureHook() {
    return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      const { user } = requireApiKey(request);
      const counter = this.captureCounter(user.plan);
      if (counter) await enforce(counter, String(user.id), user.plan, reply);
    };
  }

  /**
   * onRequest hook for GET /v1/render (after the link's signature is checked): the key's own
   * window of link requests. A link is public, so its replays never draw on the account's
   * capture rate: a stranger replaying it cannot lock its owner's API calls out.
   */
  linkHook() {
    return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      const { key, user } = requireApiKey(request);
      const counter = this.linkCounter(user.plan);
      if (counter) await enforce(counter, String(key.id), user.plan, reply, 'link requests');
    };
  }

  /** onRequest hook for the other programmatic endpoints. */
  otherHook() {
    return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      const { user } = requireApiKey(request);
      await enforce(this.other, String(user.id), user.plan, reply);
    };
  }

  /**
   * The account's capture rate for a capture the dashboard starts (a monitor's run now),
   * after the session hook: the same counter as its keys' captures.
   */
  sessionCaptureHook() {
    return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      const user = requireAccount(request);
      const counter = this.captureCounter(user.plan);
      if (counter) await enforce(counter, String(user.id), user.plan, reply);
    };
  }

  /**
   * The same account-wide limit for a dashboard action that makes the service work for the
   * account (resending a webhook, changing a monitor), after the session hook.
   */
  sessionOtherHook() {
    return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      const user = requireAccount(request);
      await enforce(this.other, String(user.id), user.plan, reply);
    };
  }

  /**
   * Every dashboard read (a GET by session cookie), after the session hook: as many per
   * minute per account as its keys' reads get (`rates.otherEndpointsPerMinute`), in a window
   * of its own, so a program spending the keys' window does not lock its owner out of the
   * dashboard (the keys page to revoke it included), nor the dashboard the program.
   */
  sessionReadHook() {
    return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      const user = requireAccount(request);
      await enforce(this.sessionReads, String(user.id), user.plan, reply);
    };
  }

  /**
   * A dashboard change of the account's own settings (keys, secrets, billing, an image
   * deleted), after the session hook: `rates.sessionChangesPerMinute` per account, in a window
   * of its own, so neither a program spending its keys' window nor the dashboard's reads keep
   * the owner from revoking a key, and a stolen session cannot drive the payment provider.
   */
  sessionChangeHook() {
    return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      const user = requireAccount(request);
      await enforce(this.sessionChanges, String(user.id), user.plan, reply);
    };
  }
}

export function rateHeaders(limit: number, state: WindowState): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': String(Math.max(0, limit - state.used)),
    'X-RateLimit-Reset': String(Math.ceil(state.resetAt / 1000)),
  };
}

async function enforce(
  counter: WindowCounter,
  key: string,
  plan: string,
  reply: FastifyReply,
  what = 'requests',
): Promise<void> {
  const state = await counter.take(key);
  reply.headers(rateHeaders(counter.limit, state));
  if (state.allowed) return;
  const retryAfter = Math.max(1, Math.ceil((state.resetAt - Date.now()) / 1000));
  throw new AppError('rate_limited', 'rate limit exceeded', {
    body: {
      message: `Rate limit of ${counter.limit} ${what} per minute exceeded; retry after ${retryAfter} seconds.`,
      success: false,
      limit: counter.limit,
      used: counter.limit,
      remaining: 0,
      reset_time: Math.ceil(state.resetAt / 1000),
      plan,
    },
    headers: { 'Retry-After': String(retryAfter) },
  });
}
