import { Type } from 'typebox';
import { PLAN_NAMES } from '../../../domain/plans.ts';
import type { App, RouteDeps } from '../../types.ts';

const PlanItem = Type.Object({
  name: Type.String(),
  price_cents: Type.Integer(),
  monthly_quota: Type.Union([Type.Integer(), Type.Null()]),
  daily_quota: Type.Union([Type.Integer(), Type.Null()]),
  rate_per_minute: Type.Union([Type.Integer(), Type.Null()]),
  link_requests_per_minute: Type.Union([Type.Integer(), Type.Null()], {
    description:
      'Signed render link requests per minute per API key, a window apart from rate_per_minute.',
  }),
  concurrent_renders: Type.Integer(),
  max_width: Type.Integer(),
  max_height: Type.Integer(),
  formats: Type.Array(Type.String()),
  max_device_scale_factor: Type.Number(),
  full_page: Type.Boolean(),
  fresh: Type.Boolean(),
  retention_hours: Type.Integer(),
  listable: Type.Boolean(),
  max_queued_jobs: Type.Integer({
    description: 'Async captures queued or rendering at once; 0: no async captures.',
  }),
  max_monitors: Type.Integer({ description: 'Monitors one account may have; 0: no monitors.' }),
  min_monitor_interval: Type.Integer({
    description: 'The shortest `every` a monitor may have, in minutes.',
  }),
  storage_destinations: Type.Integer({
    description: 'Storage destinations (your own buckets) one account may have; 0: none.',
  }),
  proxies: Type.Boolean({
    description: 'Captures through a proxy (`proxy`, `proxy_country`; GET /v1/proxies).',
  }),
});

/** The plan table as data, for the pricing table and for clients that adapt to limits. */
export function registerListPlans(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/plans',
    {
      schema: {
        tags: ['plans'],
        summary: 'The plans and their limits (public)',
        response: { 200: Type.Object({ data: Type.Array(PlanItem) }) },
      },
    },
    async () => ({ data: PLAN_NAMES.map((name) => deps.ctx.plans[name]) }),
  );
}
