import {
  deleteDestination,
  testDestination,
} from '../../../domain/destinations/manage-destinations.ts';
import { errorResponses, SuccessBody } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { DestinationBody, DestinationParams, type DestinationSurface } from './surface.ts';

/**
 * DELETE /v1/storage-destinations/{id} (captures naming it are refused from then on; what it
 * holds stays in the bucket), and POST /v1/storage-destinations/{id}/test (the test write
 * again, `tested_at` moved on success).
 */
export function registerChangeDestinations(
  app: App,
  deps: RouteDeps,
  surface: DestinationSurface,
): void {
  app.delete(
    `${surface.base}/:id`,
    {
      schema: {
        tags: surface.tags,
        summary: surface.summary('Delete a storage destination (the objects in the bucket stay)'),
        security: surface.security,
        params: DestinationParams,
        response: {
          200: SuccessBody,
          ...errorResponses(401, ...surface.refusals(true), 404, 429, 500),
        },
      },
      onRequest: surface.onRequest('change'),
    },
    async (request) => {
      await deleteDestination(deps.capture, surface.user(request), request.params.id);
      return { success: true, message: 'storage destination deleted' };
    },
  );
  app.post(
    `${surface.base}/:id/test`,
    {
      schema: {
        tags: surface.tags,
        summary: surface.summary('Test a storage destination again (a write and a delete)'),
        security: surface.security,
        params: DestinationParams,
        response: {
          200: DestinationBody,
          ...errorResponses(400, 401, ...surface.refusals(true), 404, 429, 500),
        },
      },
      onRequest: surface.onRequest('work'),
    },
    async (request) =>
      testDestination(
        { ...deps.capture, writer: deps.capture.destinationWriter },
        surface.user(request),
        request.params.id,
      ),
  );
}
