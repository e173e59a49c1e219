import { Type } from 'typebox';
import { createDestination } from '../../../domain/destinations/manage-destinations.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { DestinationBody, type DestinationSurface } from './surface.ts';

const Text = (max: number, description?: string) =>
  Type.String({ minLength: 1, maxLength: max, ...(description ? { description } : {}) });

const CreateBody = Type.Object(
  {
    name: Text(100, 'Your name for it.'),
    endpoint: Type.Optional(
      Text(
        2048,
        'https://host[:port] of an S3-compatible store (R2, MinIO, ...); absent: AWS S3. http only for a host:port EGRESS_ALLOWLIST names.',
      ),
    ),
    region: Text(32, 'eu-west-1; `auto` for R2.'),
    bucket: Type.String({
      minLength: 3,
      maxLength: 63,
      pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$',
    }),
    prefix: Type.Optional(Type.String({ maxLength: 512, description: 'Keys start with it.' })),
    access_key_id: Text(256),
    secret_access_key: Text(512, 'Sealed at rest, never answered.'),
    path_style: Type.Optional(
      Type.Boolean({ description: 'Default: true with an endpoint, false for AWS.' }),
    ),
    acl: Type.Optional(Type.Union([Type.Literal('private'), Type.Literal('public-read')])),
  },
  { additionalProperties: false },
);

/**
 * POST /v1/storage-destinations: saved only once a test write into the bucket succeeded
 * (docs/destinations.md); 400 storage_test_failed names the provider's code otherwise.
 */
export function registerCreateDestination(
  app: App,
  deps: RouteDeps,
  surface: DestinationSurface,
): void {
  app.post(
    surface.base,
    {
      schema: {
        tags: surface.tags,
        summary: surface.summary(
          'Add a storage destination (your own S3-compatible bucket), tested first',
        ),
        security: surface.security,
        body: CreateBody,
        response: {
          201: DestinationBody,
          ...errorResponses(400, 401, ...surface.refusals(true), 429, 500),
        },
      },
      onRequest: surface.onRequest('work'),
    },
    async (request, reply) => {
      const user = surface.user(request);
      const plan = deps.ctx.plans[user.plan];
      const created = await createDestination(
        { ...deps.capture, writer: deps.capture.destinationWriter },
        { user, plan },
        request.body,
      );
      return reply.code(201).send(created);
    },
  );
}
