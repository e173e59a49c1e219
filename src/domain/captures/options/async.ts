import { Type } from 'typebox';
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
  resolve(value, { plan }) {
    if (value === true && plan.max_queued_jobs === 0) throw planRestriction('async', plan);
    return {};
  },
  cacheKey: () => undefined,
});
