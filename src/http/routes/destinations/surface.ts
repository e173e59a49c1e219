import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { User } from '../../../domain/store.ts';
import { requireAccount, requireApiKey, sessionHook } from '../../auth.ts';
import type { RouteDeps } from '../../types.ts';

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * Where the storage destinations are served, and to whom (docs/destinations.md), as the
 * monitors are: programs under /v1/storage-destinations with an API key, the dashboard under
 * /v1/account/storage-destinations with the session cookie (its cross-site refusal
 * included). Each operation is registered once per surface, so the two cannot drift apart.
 * `draw`: what an operation counts against: by key the account's other-endpoints window; by
 * session its reads, its changes, or (a test write, which makes the service work) the same
 * account-wide window as by key.
 */
export interface DestinationSurface {
  base: string;
  tags: string[];
  security: Array<Record<string, string[]>>;
  summary(text: string): string;
  onRequest(draw: 'read' | 'change' | 'work'): Hook[];
  /** A session's cross-site refusal (403) on changes; none by key. */
  refusals(stateChanging: boolean): Array<403>;
  user(request: FastifyRequest): User;
}

export function byApiKey(deps: RouteDeps): DestinationSurface {
  return {
    base: '/v1/storage-destinations',
    tags: ['storage destinations'],
    security: [{ apiKey: [] }],
    summary: (text) => text,
    onRequest: () => [deps.apiKeyHook, deps.rateLimits.otherHook()],
    refusals: () => [],
    user: (request) => requireApiKey(request).user,
  };
}

export function bySession(deps: RouteDeps): DestinationSurface {
  const session = sessionHook(deps.ctx, deps.dashboardOrigins);
  return {
    base: '/v1/account/storage-destinations',
    tags: ['dashboard'],
    security: [{ session: [] }],
    summary: (text) => `Dashboard (session): ${text}`,
    onRequest: (draw) => [
      session,
      draw === 'read'
        ? deps.rateLimits.sessionReadHook()
        : draw === 'change'
          ? deps.rateLimits.sessionChangeHook()
          : deps.rateLimits.sessionOtherHook(),
    ],
    refusals: (stateChanging) => (stateChanging ? [403] : []),
    user: (request) => requireAccount(request),
  };
}

export const DestinationParams = Type.Object({
  id: Type.String({ maxLength: 64, description: 'The destination id, `dst_...`.' }),
});

export const DestinationBody = Type.Object({
  id: Type.String(),
  name: Type.String(),
  endpoint: Type.Union([Type.String(), Type.Null()], {
    description: "null: AWS S3, the region's endpoint.",
  }),
  region: Type.String(),
  bucket: Type.String(),
  prefix: Type.String({
    description: 'Every key the service writes starts with it ("" for none).',
  }),
  path_style: Type.Boolean(),
  acl: Type.Union([Type.Literal('private'), Type.Literal('public-read')]),
  created_at: Type.String({ format: 'date-time' }),
  tested_at: Type.String({
    format: 'date-time',
    description: 'The last test write that succeeded.',
  }),
});
