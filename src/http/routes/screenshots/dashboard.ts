import { Type } from 'typebox';
import { deleteScreenshot } from '../../../domain/captures/delete-screenshot.ts';
import { AppError } from '../../../domain/errors.ts';
import { requireAccount, sessionHook } from '../../auth.ts';
import { errorResponses, parseId, SuccessBody } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { ListQuery, ScreenshotPage, screenshotPage } from './schemas.ts';

/** The dashboard's screenshot history: the same records as GET /v1/screenshots, by session. */
export function registerAccountScreenshots(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/account/screenshots',
    {
      schema: {
        tags: ['dashboard'],
        security: [{ session: [] }],
        summary: "The signed-in account's screenshots (Pro), newest first",
        querystring: ListQuery,
        response: { 200: ScreenshotPage, ...errorResponses(400, 401, 429, 500) },
      },
      onRequest: [sessionHook(deps.ctx, deps.dashboardOrigins), deps.rateLimits.sessionReadHook()],
    },
    async (request) => screenshotPage(deps.capture, requireAccount(request), request.query),
  );

  app.delete(
    '/v1/account/screenshots/:id',
    {
      schema: {
        tags: ['dashboard'],
        security: [{ session: [] }],
        summary: 'Delete one of the signed-in account’s screenshots',
        params: Type.Object({ id: Type.String() }),
        response: { 200: SuccessBody, ...errorResponses(400, 401, 403, 404, 429, 500) },
      },
      onRequest: [
        sessionHook(deps.ctx, deps.dashboardOrigins),
        deps.rateLimits.sessionChangeHook(),
      ],
    },
    async (request) => {
      const user = requireAccount(request);
      const id = parseId(request.params.id);
      if (id === null) throw new AppError('invalid_request', 'invalid screenshot id');
      await deleteScreenshot(deps.capture, { user, id });
      return { success: true, message: 'screenshot deleted' };
    },
  );
}
