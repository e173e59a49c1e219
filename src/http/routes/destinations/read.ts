import { Type } from 'typebox';
import {
  destinationAnswer,
  findDestination,
} from '../../../domain/destinations/manage-destinations.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { callerOf, DestinationBody, DestinationParams, keyOrSession, SECURITY } from './surface.ts';

/** GET /v1/storage-destinations and GET /v1/storage-destinations/{id}: never the secret. */
export function registerReadDestinations(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/storage-destinations',
    {
      schema: {
        tags: ['storage destinations'],
        summary: "The account's storage destinations, oldest first",
        security: SECURITY,
        response: {
          200: Type.Object({ data: Type.Array(DestinationBody) }),
          ...errorResponses(401, 429, 500),
        },
      },
      onRequest: keyOrSession(deps, 'read'),
    },
    async (request) => {
      const user = callerOf(request);
      const list = await deps.capture.store.destinations.list(user.id);
      return { data: list.map(destinationAnswer) };
    },
  );
  app.get(
    '/v1/storage-destinations/:id',
    {
      schema: {
        tags: ['storage destinations'],
        summary: 'One storage destination',
        security: SECURITY,
        params: DestinationParams,
        response: { 200: DestinationBody, ...errorResponses(401, 404, 429, 500) },
      },
      onRequest: keyOrSession(deps, 'read'),
    },
    async (request) =>
      destinationAnswer(await findDestination(deps.capture, callerOf(request), request.params.id)),
  );
}
