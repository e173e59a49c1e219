import { Type } from 'typebox';
import { AppError } from '../../../domain/errors.ts';
import { isJobId, jobAnswer } from '../../../domain/jobs/job-answer.ts';
import { requireApiKey } from '../../auth.ts';
import { errorResponses, parseId } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { screenshotItem } from './schemas.ts';

const notFound = () => new AppError('not_found', 'screenshot not found');

/**
 * GET /v1/screenshots/{id}: an async job's status (`job_...`), or a listable record's, which
 * is `succeeded` by being there. Another account's id is a 404 like an unknown one.
 */
export function registerGetScreenshot(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/screenshots/:id',
    {
      schema: {
        tags: ['screenshots'],
        summary: "An async capture's status, or a screenshot record's",
        description:
          '`{id, status, ...}`: status `queued`, `rendering`, `succeeded` (with the capture ' +
          "fields, `screenshot_id` being the record's id on Pro) or `failed` (with `error` and " +
          '`code`). A record id (Pro) answers `succeeded` with the record.',
        security: [{ apiKey: [] }],
        params: Type.Object({ id: Type.String({ description: 'A job id or a record id.' }) }),
        response: {
          200: Type.Object(
            {
              id: Type.Union([Type.String(), Type.Integer()]),
              status: Type.Union([
                Type.Literal('queued'),
                Type.Literal('rendering'),
                Type.Literal('succeeded'),
                Type.Literal('failed'),
              ]),
            },
            { additionalProperties: true },
          ),
          ...errorResponses(400, 401, 404, 429, 500),
        },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.otherHook()],
    },
    async (request, reply) => {
      const { user } = requireApiKey(request);
      const raw = request.params.id;
      reply.header('Cache-Control', 'no-store');
      if (raw.startsWith('job_')) {
        const job = isJobId(raw) ? await deps.ctx.store.jobs.get(user.id, raw) : null;
        if (!job) throw notFound();
        return jobAnswer(deps.jobs, job);
      }
      const id = parseId(raw);
      if (id === null) throw new AppError('invalid_request', 'invalid screenshot id');
      const record = await deps.ctx.store.screenshots.findForUser(user.id, id, deps.ctx.clock());
      if (!record) throw notFound();
      return { ...screenshotItem(deps.capture, record), status: 'succeeded' as const };
    },
  );
}
