import { Type } from 'typebox';
import { captureAnswer } from '../../../domain/captures/capture-answer.ts';
import { captureScreenshot } from '../../../domain/captures/capture-screenshot.ts';
import { contentTypeForExt } from '../../../domain/captures/formats.ts';
import { imageUrl } from '../../../domain/captures/ports.ts';
import { AppError } from '../../../domain/errors.ts';
import { enqueueCapture } from '../../../domain/jobs/enqueue-capture.ts';
import { statusUrl } from '../../../domain/jobs/job-answer.ts';
import { toIso } from '../../../lib/time.ts';
import { requireApiKey } from '../../auth.ts';
import { captureBodyLimit } from '../../capture-body-limit.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { CaptureAnswer, CaptureRequest } from './schemas.ts';

export function registerCreateScreenshot(app: App, deps: RouteDeps): void {
  app.post(
    '/v1/screenshots',
    {
      schema: {
        tags: ['screenshots'],
        summary: 'Capture a page and get a hosted image URL',
        description:
          'Answers 201 with the JSON below; with `response_type: "image"` the 201 body is ' +
          'the image bytes instead (Content-Type of the format) and the facts are headers: ' +
          'X-Image-Url, X-Expires-At, X-Cached, X-Quota-Used, X-Quota-Limit, X-Screenshot-Id; ' +
          "X-Capture-Warnings names the warnings' codes on either.",
        security: [{ apiKey: [] }],
        body: CaptureRequest,
        response: {
          201: CaptureAnswer,
          202: Type.Object(
            {
              id: Type.String({ description: 'The job id (`job_...`).' }),
              status: Type.Literal('queued'),
              status_url: Type.String({ format: 'uri' }),
            },
            { description: 'With `async: true`: queued; the result is at `status_url`.' },
          ),
          ...errorResponses(400, 401, 402, 413, 422, 429, 500, 502, 503, 504),
        },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.captureHook()],
      // 64 KiB, or 1.5 MiB with a document (html, markdown).
      ...captureBodyLimit,
    },
    async (request, reply) => {
      const auth = requireApiKey(request);
      if (request.body.async === true) {
        const job = await enqueueCapture(deps.jobs, {
          user: auth.user,
          keyId: auth.key.id,
          input: request.body,
        });
        const url = statusUrl(deps.jobs, job.id);
        return reply
          .status(202)
          .header('Location', url)
          .send({ id: job.id, status: 'queued' as const, status_url: url });
      }
      const outcome = await captureScreenshot(deps.capture, {
        user: auth.user,
        keyId: auth.key.id,
        input: request.body,
      });
      const { record } = outcome;
      reply.header('X-Cache', outcome.cached ? 'HIT' : 'MISS');
      // Every answer says it, the JSON one beside `warnings`: codes only, comma-separated.
      if (record.warnings.length > 0) {
        reply.header('X-Capture-Warnings', record.warnings.map((w) => w.code).join(','));
      }
      if (record.targetStatus !== null)
        reply.header('X-Target-Status', String(record.targetStatus));
      if (outcome.renderMs !== null)
        reply.header('X-Render-Time-Ms', String(Math.round(outcome.renderMs)));
      if (request.body.response_type === 'image') {
        // The bytes this node just rendered, or the cached record's, read once from storage.
        const image =
          outcome.image ?? (await deps.storage.get(`${record.token}.${record.ext}`))?.body;
        if (!image) throw new AppError('storage_error', 'the stored image could not be read');
        if (record.listable) reply.header('X-Screenshot-Id', String(record.id));
        return reply
          .status(201)
          .header('Content-Type', contentTypeForExt(record.ext) ?? 'application/octet-stream')
          .header('X-Content-Type-Options', 'nosniff')
          .header('X-Image-Url', imageUrl(deps.capture, record))
          .header('X-Expires-At', toIso(record.expiresAt))
          .header('X-Cached', String(outcome.cached))
          .header('X-Quota-Used', String(outcome.quota.used))
          .header('X-Quota-Limit', String(outcome.quota.limit))
          .send(image);
      }
      return reply.status(201).send(captureAnswer(deps.capture, outcome));
    },
  );
}
