import { Type } from 'typebox';
import {
  destinationAnswer,
  findDestination,
} from '../../../domain/destinations/manage-destinations.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { DestinationBody, DestinationParams, type DestinationSurface } from './surface.ts';

/** GET /v1/storage-destinations and GET /v1/storage-destinations/{id}: never the secret. */
export function registerReadDestinations(
  app: App,
  deps: RouteDeps,
  surface: DestinationSurface,
): void {
  app.get(
    surface.base,
    {
      schema: {
        tags: surface.tags,
        summary: surface.summary("The account's storage destinations, oldest first"),
        security: surface.security,
        response: {
          200: Type.Object({ data: Type.Array(DestinationBody) }),
          ...errorResponses(401, 429, 500),
        },
      },
      onRequest: surface.onRequest('read'),
    },
    async (request) => {
      const user = surface.user(request);
      const list = await deps.capture.store.destinations.list(user.id);
      return { data: list.map(destinationAnswer) };
    },
  );
  app.get(
    `${surface.base}/:id`,
    {
      schema: {
        tags: surface.tags,
        summary: surface.summary('One storage destination'),
        security: surface.security,
        params: DestinationParams,
        response: { 200: DestinationBody, ...errorResponses(401, 404, 429, 500) },
      },
      onRequest: surface.onRequest('read'),
    },
    async (request) =>
      destinationAnswer(
        await findDestination(deps.capture, surface.user(request), request.params.id),
      ),
  );
}
