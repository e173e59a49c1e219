import { Type } from 'typebox';
import { deleteScreenshot } from '../../../domain/captures/delete-screenshot.ts';
import { AppError } from '../../../domain/errors.ts';
import { requireApiKey } from '../../auth.ts';
import { errorResponses, parseId, SuccessBody } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';

export function registerDeleteScreenshot(app: App, deps: RouteDeps): void {
  app.delete(
    '/v1/screenshots/:id',
    {
      schema: {
        tags: ['screenshots'],
        summary: 'Delete a screenshot record and its image (own records only)',
        security: [{ apiKey: [] }],
        params: Type.Object({ id: Type.String() }),
        response: { 200: SuccessBody, ...errorResponses(400, 401, 404, 429, 500) },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.otherHook()],
    },
    async (request) => {
      const { user } = requireApiKey(request);
      const id = parseId(request.params.id);
      if (id === null) throw new AppError('invalid_request', 'invalid screenshot id');
      await deleteScreenshot(deps.capture, { user, id });
      return { success: true, message: 'screenshot deleted' };
    },
  );
}
