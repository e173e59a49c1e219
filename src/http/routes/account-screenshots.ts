import { Type } from 'typebox';
import { BOUNDS } from '../../domain/bounds.ts';
import { deleteScreenshot } from '../../domain/captures/delete-screenshot.ts';
import { listScreenshots } from '../../domain/captures/list-screenshots.ts';
import { AppError } from '../../domain/errors.ts';
import { requireAccount, sessionHook } from '../auth.ts';
import { errorResponses, SuccessBody } from '../schemas.ts';
import type { App, RouteDeps } from '../types.ts';
import { parseId } from './key-schemas.ts';
import { ScreenshotItem, screenshotItem } from './screenshot-schemas.ts';

/** The dashboard's screenshot history: the same records as GET /v1/screenshots, by session. */
export function registerAccountScreenshots(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/account/screenshots',
    {
      schema: {
        tags: ['dashboard'],
        summary: "The signed-in account's screenshots (Pro), newest first",
        querystring: Type.Object(
          {
            limit: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: BOUNDS.listing.maxPageSize,
                default: BOUNDS.listing.defaultPageSize,
              }),
            ),
            cursor: Type.Optional(Type.String({ maxLength: BOUNDS.listing.cursorMaxLength })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            data: Type.Array(ScreenshotItem),
            has_more: Type.Boolean(),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
          ...errorResponses(400, 401, 500),
        },
      },
      onRequest: sessionHook(deps.ctx, deps.dashboardOrigins),
    },
    async (request) => {
      const user = requireAccount(request);
      const page = await listScreenshots(deps.capture, {
        user,
        limit: request.query.limit ?? BOUNDS.listing.defaultPageSize,
        cursor: request.query.cursor,
      });
      return {
        data: page.items.map((r) => screenshotItem(deps.capture, r)),
        has_more: page.nextCursor !== null,
        next_cursor: page.nextCursor,
      };
    },
  );

  app.delete(
    '/v1/account/screenshots/:id',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Delete one of the signed-in account’s screenshots',
        params: Type.Object({ id: Type.String() }),
        response: { 200: SuccessBody, ...errorResponses(400, 401, 403, 404, 500) },
      },
      onRequest: sessionHook(deps.ctx, deps.dashboardOrigins),
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
