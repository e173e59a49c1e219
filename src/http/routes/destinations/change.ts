import {
  deleteDestination,
  testDestination,
} from '../../../domain/destinations/manage-destinations.ts';
import { errorResponses, SuccessBody } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { callerOf, DestinationBody, DestinationParams, keyOrSession, SECURITY } from './surface.ts';

/**
 * DELETE /v1/storage-destinations/{id} (captures naming it are refused from then on; what it
 * holds stays in the bucket), and POST /v1/storage-destinations/{id}/test (the test write
 * again, `tested_at` moved on success).
 */
export function registerChangeDestinations(app: App, deps: RouteDeps): void {
  app.delete(
    '/v1/storage-destinations/:id',
    {
      schema: {
        tags: ['storage destinations'],
        summary: 'Delete a storage destination (the objects in the bucket stay)',
        security: SECURITY,
        params: DestinationParams,
        response: { 200: SuccessBody, ...errorResponses(401, 403, 404, 429, 500) },
      },
      onRequest: keyOrSession(deps, 'change'),
    },
    async (request) => {
      await deleteDestination(deps.capture, callerOf(request), request.params.id);
      return { success: true, message: 'storage destination deleted' };
    },
  );
  app.post(
    '/v1/storage-destinations/:id/test',
    {
      schema: {
        tags: ['storage destinations'],
        summary: 'Test a storage destination again (a write and a delete)',
        security: SECURITY,
        params: DestinationParams,
        response: { 200: DestinationBody, ...errorResponses(400, 401, 403, 404, 429, 500) },
      },
      onRequest: keyOrSession(deps, 'work'),
    },
    async (request) =>
      testDestination(
        { ...deps.capture, writer: deps.capture.destinationWriter },
        callerOf(request),
        request.params.id,
      ),
  );
}
