import { Type } from 'typebox';
import { captureScreenshot } from '../../domain/captures/capture-screenshot.ts';
import { imageUrl } from '../../domain/captures/ports.ts';
import { toIso } from '../../lib/time.ts';
import { requireApiKey } from '../auth.ts';
import { errorResponses } from '../schemas.ts';
import type { App, RouteDeps } from '../types.ts';
import { CaptureRequest, CaptureResult } from './screenshot-schemas.ts';

export function registerCreateScreenshot(app: App, deps: RouteDeps): void {
  app.post(
    '/v1/screenshots',
    {
      schema: {
        tags: ['screenshots'],
        summary: 'Capture a page and get a hosted image URL',
        security: [{ apiKey: [] }],
        body: CaptureRequest,
        response: {
          201: CaptureResult,
          402: { description: 'Monthly quota exhausted.', ...QuotaBody },
          ...errorResponses(400, 401, 413, 429, 500, 502, 503, 504),
        },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.captureHook()],
    },
    async (request, reply) => {
      const auth = requireApiKey(request);
      const outcome = await captureScreenshot(deps.capture, {
        user: auth.user,
        keyId: auth.key.id,
        input: request.body,
      });
      const { record } = outcome;
      reply.header('X-Cache', outcome.cached ? 'HIT' : 'MISS');
      if (record.targetStatus !== null)
        reply.header('X-Target-Status', String(record.targetStatus));
      if (outcome.renderMs !== null)
        reply.header('X-Render-Time-Ms', String(Math.round(outcome.renderMs)));
      return reply.status(201).send({
        ...(record.listable ? { id: record.id } : {}),
        image_url: imageUrl(deps.capture, record),
        cached: outcome.cached,
        expires_at: toIso(record.expiresAt),
        quota: outcome.quota,
        format: record.format,
        width: record.width,
        height: record.height,
        // Said on every full-page capture, and on any other image that was cut (an element
        // taller or wider than the limits).
        ...(record.fullPage || record.truncated ? { truncated: record.truncated } : {}),
        ...(record.metadata !== null ? { metadata: record.metadata } : {}),
      });
    },
  );
}

const QuotaBody = Type.Object({
  error: Type.String(),
  plan: Type.String(),
  used: Type.Integer(),
  limit: Type.Integer(),
  resets_at: Type.String({ format: 'date-time' }),
});
