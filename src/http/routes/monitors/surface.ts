import type { FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../../domain/store.ts';
import { requireAccount, requireApiKey, sessionHook } from '../../auth.ts';
import type { RouteDeps } from '../../types.ts';

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * What an operation draws on besides authentication: a capture's rate, the other rate, or a
 * read's (by key the other rate, by session the dashboard's reads).
 */
export type Draw = 'capture' | 'other' | 'read';

/**
 * Where the monitors' operations are served, and to whom: programs under /v1/monitors with an
 * API key, and the dashboard under /v1/account/monitors with the session cookie (its
 * cross-site refusal included), as the dashboard's screenshot list is. Each operation is one
 * file with one schema and one handler, registered once per surface (routes/index.ts), so the
 * two cannot drift apart; the surface gives the path, the credential, the rate and the caller.
 */
export interface MonitorSurface {
  /** `/v1/monitors` or `/v1/account/monitors`. */
  base: string;
  tags: string[];
  security: Array<Record<string, string[]>>;
  /** The words the API document adds to each operation's summary. */
  summary(text: string): string;
  /** Authentication first, then the per-minute rate the operation draws on. */
  onRequest(draw: Draw): Hook[];
  /** Statuses this surface adds for a state change: a session's cross-site refusal (403). */
  refusals(stateChanging: boolean): Array<403>;
  /** The account the request acts for, set by the surface's authentication. */
  user(request: FastifyRequest): User;
}

export function byApiKey(deps: RouteDeps): MonitorSurface {
  return {
    base: '/v1/monitors',
    tags: ['monitors'],
    security: [{ apiKey: [] }],
    summary: (text) => text,
    onRequest: (draw) => [
      deps.apiKeyHook,
      draw === 'capture' ? deps.rateLimits.captureHook() : deps.rateLimits.otherHook(),
    ],
    refusals: () => [],
    user: (request) => requireApiKey(request).user,
  };
}

/**
 * The dashboard's surface. Reads draw on the account's dashboard reads (as every GET by
 * session does, `sessionReadHook`); a change draws on the account's non-capture rate and a
 * run on its capture rate, as with a key, so the dashboard is no way around either.
 */
export function bySession(deps: RouteDeps): MonitorSurface {
  const session = sessionHook(deps.ctx, deps.dashboardOrigins);
  return {
    base: '/v1/account/monitors',
    tags: ['dashboard'],
    security: [{ session: [] }],
    summary: (text) => `Dashboard (session): ${text}`,
    onRequest: (draw) => [
      session,
      draw === 'read'
        ? deps.rateLimits.sessionReadHook()
        : draw === 'capture'
          ? deps.rateLimits.sessionCaptureHook()
          : deps.rateLimits.sessionOtherHook(),
    ],
    refusals: (stateChanging) => (stateChanging ? [403] : []),
    user: (request) => requireAccount(request),
  };
}
