import { updateMonitor } from '../../../domain/monitors/manage-monitors.ts';
import { requireApiKey } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { MonitorItem, MonitorParams, monitorItem, UpdateMonitorBody } from './schemas.ts';

/** PATCH /v1/monitors/{id}: pause, resume (due at its next slot), re-time, rename. */
export function registerUpdateMonitor(app: App, deps: RouteDeps): void {
  app.patch(
    '/v1/monitors/:id',
    {
      schema: {
        tags: ['monitors'],
        summary: 'Change a monitor (pause, resume, every, threshold, name, webhook_url)',
        description:
          '`status: "active"` resumes a paused monitor, one paused for its quota included; ' +
          'it is next due at its next slot. `webhook_url: null` stops its events.',
        security: [{ apiKey: [] }],
        params: MonitorParams,
        body: UpdateMonitorBody,
        response: { 200: MonitorItem, ...errorResponses(400, 401, 404, 429, 500) },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.otherHook()],
    },
    async (request) => {
      const { user } = requireApiKey(request);
      const monitor = await updateMonitor(deps.monitors, {
        user,
        id: request.params.id,
        body: request.body,
      });
      return monitorItem(monitor);
    },
  );
}
