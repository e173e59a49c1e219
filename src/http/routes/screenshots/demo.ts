import { Type } from 'typebox';
import { countDemoRequest } from '../../../domain/captures/count-demo-request.ts';
import { demoCapture } from '../../../domain/captures/demo-capture.ts';
import { imageUrl } from '../../../domain/captures/ports.ts';
import { CaptureWarning } from '../../../domain/captures/warnings.ts';
import { toIso } from '../../../lib/time.ts';
import { errorResponses, IsoDateTime } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';

export function registerDemoScreenshot(app: App, deps: RouteDeps): void {
  app.post(
    '/demo/screenshot',
    {
      schema: {
        tags: ['demo'],
        summary: 'Landing-page demo: PNG 1280x720, 5 per day per client IP (not for integration)',
        body: Type.Object({ url: Type.String() }, { additionalProperties: false }),
        response: {
          201: Type.Object({
            image_url: Type.String(),
            cached: Type.Boolean(),
            expires_at: IsoDateTime,
            warnings: Type.Array(CaptureWarning, {
              description: 'What may be wrong with the image (docs/api.md, "Warnings").',
            }),
          }),
          ...errorResponses(400, 413, 429, 500, 502, 503, 504),
        },
      },
      // Before the body is read or validated: every request draws on the hourly budget.
      onRequest: async (request) => {
        await countDemoRequest(deps.demo, { ip: request.ip });
      },
    },
    async (request, reply) => {
      const { record, cached } = await demoCapture(deps.demo, {
        url: request.body.url,
        ip: request.ip,
      });
      reply.header('X-Cache', cached ? 'HIT' : 'MISS');
      return reply.status(201).send({
        image_url: imageUrl(deps.capture, record),
        cached,
        expires_at: toIso(record.expiresAt),
        warnings: record.warnings,
      });
    },
  );
}
