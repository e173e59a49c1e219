import { Type } from 'typebox';
import { BOUNDS } from '../../domain/bounds.ts';
import { listScreenshots } from '../../domain/captures/list-screenshots.ts';
import { requireApiKey } from '../auth.ts';
import { errorResponses } from '../schemas.ts';
import type { App, RouteDeps } from '../types.ts';
import { ScreenshotItem, screenshotItem } from './screenshot-schemas.ts';

export function registerListScreenshots(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/screenshots',
    {
      schema: {
        tags: ['screenshots'],
        summary:
          "The account's screenshots, most recent first (Pro; Free accounts get an empty list)",
        security: [{ apiKey: [] }],
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
          ...errorResponses(400, 401, 429, 500),
        },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.otherHook()],
    },
    async (request) => {
      const { user } = requireApiKey(request);
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
}
