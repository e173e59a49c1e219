import { BOUNDS } from '../../../domain/bounds.ts';
import { createMonitor } from '../../../domain/monitors/manage-monitors.ts';
import { captureBodyLimit } from '../../capture-body-limit.ts';
import { errorResponses, tooLarge } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { CreateMonitorBody, MonitorItem, monitorItem } from './schemas.ts';
import type { MonitorSurface } from './surface.ts';

/** POST /v1/monitors (docs/api.md, "Monitors"): Pro; the options checked as a capture's. */
export function registerCreateMonitor(app: App, deps: RouteDeps, surface: MonitorSurface): void {
  app.post(
    surface.base,
    {
      // An `html` target is a document, as a capture body's is: 1.5 MiB with one, else 64 KiB.
      ...captureBodyLimit,
      schema: {
        tags: surface.tags,
        summary: surface.summary(
          'Create a monitor: scheduled captures with change detection (Pro)',
        ),
        description:
          'Exactly one of `url` and `html`; `options` are capture options as POST ' +
          '/v1/screenshots takes them (without `async`, `response_type` and `webhook_url`), ' +
          'refused by the same rules, naming `options.<field>`.',
        security: surface.security,
        body: CreateMonitorBody,
        response: {
          201: MonitorItem,
          ...errorResponses(400, 401, ...surface.refusals(true), 429, 500),
          413: tooLarge(BOUNDS.http.documentBodyBytes),
        },
      },
      onRequest: surface.onRequest('other'),
    },
    async (request, reply) => {
      const user = surface.user(request);
      const monitor = await createMonitor(deps.monitors, { user, body: request.body });
      return reply.status(201).send(monitorItem(monitor));
    },
  );
}
