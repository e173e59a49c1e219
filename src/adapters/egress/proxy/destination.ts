import { isAppError } from '../../../domain/errors.ts';
import type { CheckedDestination, EgressPolicy } from '../policy.ts';
import { checkDestination } from '../policy.ts';
import type { ProxyContext } from './context.ts';

/** A destination let through (with the address to connect to), or why not. */
export type Verdict =
  | { ok: true; dest: CheckedDestination }
  | { ok: false; status: 403 | 502; reason: string };

/**
 * The one destination check every path makes: resolves `host` once and applies the policy.
 * 403 when the policy refuses (logged, counted, reported to onRefused); 502 when the name does
 * not resolve or the check fails otherwise.
 */
export async function checkTarget(ctx: ProxyContext, host: string, port: number): Promise<Verdict> {
  const { logger } = ctx;
  try {
    const dest = await checkDestination(policyWithSelf(ctx), host, port);
    ctx.allowed++;
    logger.debug({ host, port, address: dest.address }, 'egress allowed');
    return { ok: true, dest };
  } catch (err) {
    if (isAppError(err) && err.code === 'url_not_allowed') {
      ctx.refused++;
      const info = { host, port, reason: err.message };
      logger.warn(info, 'egress refused');
      try {
        ctx.onRefused?.(info);
      } catch (hookErr) {
        logger.warn({ err: hookErr }, 'egress onRefused hook threw');
      }
      return { ok: false, status: 403, reason: err.message };
    }
    const reason = isAppError(err) ? err.message : 'destination check failed';
    // Names that do not resolve are routine for pages (ads, trackers): debug, not warn.
    logger.debug({ host, port, reason }, 'egress destination unreachable');
    return { ok: false, status: 502, reason };
  }
}

/** The proxy's own port is "self" too: a page must not loop requests through it. */
const policyWithSelf = (ctx: ProxyContext): EgressPolicy => ({
  ...ctx.policy,
  selfPorts: [...ctx.policy.selfPorts, ctx.ownPort],
});
