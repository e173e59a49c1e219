import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import { defineOption, planRestriction } from './define.ts';

/**
 * Queue the capture and answer 202 at once (docs/api.md, "Async captures"). The route reads
 * it; the capture that later runs is the same as a synchronous one.
 */
export const asyncCapture = defineOption({
  name: 'async',
  schema: Type.Boolean({
    description:
      'Queue the capture and answer 202 `{id, status: "queued", status_url}` at once; the ' +
      'result is at GET /v1/screenshots/{id} and, with webhook_url, delivered there (Pro).',
  }),
  resolve(value, { plan, input }) {
    if (value === true && plan.max_queued_jobs === 0) throw planRestriction('async', plan);
    if (value === true && input.response_type === 'image') {
      // The bytes cannot be in a 202: the result is at the status URL.
      throw new AppError('invalid_request', 'response_type image is not allowed with async: true');
    }
    return {};
  },
  cacheKey: () => undefined,
});
