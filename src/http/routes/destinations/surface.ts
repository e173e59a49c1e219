import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { User } from '../../../domain/store.ts';
import { requireAccount, sessionHook } from '../../auth.ts';
import type { RouteDeps } from '../../types.ts';

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * The storage destinations are served on one path to both credentials (docs/destinations.md): an
 * `X-API-Key` when the request carries one, else the dashboard's session cookie (with its
 * cross-site refusal). `draw`: what the operation counts against, by key the account's
 * other-endpoints window; by session its reads, its changes, or (a test write, which makes
 * the service work) the same account-wide window as by key.
 */
export function keyOrSession(deps: RouteDeps, draw: 'read' | 'change' | 'work'): Hook[] {
  const session = sessionHook(deps.ctx, deps.dashboardOrigins);
  const byKey = deps.rateLimits.otherHook();
  const bySession =
    draw === 'read'
      ? deps.rateLimits.sessionReadHook()
      : draw === 'change'
        ? deps.rateLimits.sessionChangeHook()
        : deps.rateLimits.sessionOtherHook();
  return [
    async (request, reply) => {
      if (request.headers['x-api-key'] !== undefined) {
        await deps.apiKeyHook(request);
        await byKey(request, reply);
      } else {
        await session(request);
        await bySession(request, reply);
      }
    },
  ];
}

/** The account the request acts for, by whichever credential it came with. */
export const callerOf = (request: FastifyRequest): User =>
  request.apiKey?.user ?? requireAccount(request);

export const SECURITY: Array<Record<string, string[]>> = [{ apiKey: [] }, { session: [] }];

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
