import { updateMonitor } from '../../../domain/monitors/manage-monitors.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { MonitorItem, MonitorParams, monitorItem, UpdateMonitorBody } from './schemas.ts';
import type { MonitorSurface } from './surface.ts';

/** PATCH /v1/monitors/{id}: pause, resume (due at its next slot), re-time, rename. */
export function registerUpdateMonitor(app: App, deps: RouteDeps, surface: MonitorSurface): void {
  app.patch(
    `${surface.base}/:id`,
    {
      schema: {
        tags: surface.tags,
        summary: surface.summary(
          'Change a monitor (pause, resume, every, threshold, name, webhook_url)',
        ),
        description:
          '`status: "active"` resumes a paused monitor, one paused for its quota included; ' +
          'it is next due at its next slot. `webhook_url: null` stops its events.',
        security: surface.security,
        params: MonitorParams,
        body: UpdateMonitorBody,
        response: {
          200: MonitorItem,
          ...errorResponses(400, 401, ...surface.refusals(true), 404, 429, 500),
        },
      },
      onRequest: surface.onRequest('other'),
    },
    async (request) => {
      const user = surface.user(request);
      const monitor = await updateMonitor(deps.monitors, {
        user,
        id: request.params.id,
        body: request.body,
      });
      return monitorItem(monitor);
    },
  );
}
