import { deleteMonitor } from '../../../domain/monitors/manage-monitors.ts';
import { errorResponses, SuccessBody } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { MonitorParams } from './schemas.ts';
import type { MonitorSurface } from './surface.ts';

/**
 * DELETE /v1/monitors/{id}: the monitor, its runs and their images (each run's, each diff,
 * the baseline), whose URLs answer 404 once this has answered. The stored files are deleted
 * right after, off the request; one that cannot be is logged and left to the orphan sweep.
 */
export function registerDeleteMonitor(app: App, deps: RouteDeps, surface: MonitorSurface): void {
  app.delete(
    `${surface.base}/:id`,
    {
      schema: {
        tags: surface.tags,
        summary: surface.summary('Delete a monitor, its runs and their images'),
        security: surface.security,
        params: MonitorParams,
        response: {
          200: SuccessBody,
          ...errorResponses(401, ...surface.refusals(true), 404, 429, 500),
        },
      },
      onRequest: surface.onRequest('other'),
    },
    async (request) => {
      const user = surface.user(request);
      const log = request.log;
      // Answered once the records are gone (the URLs are 404 from then on); the file
      // deletions it started (`filesDeleted`, never rejected) are not waited for: a monitor's
      // files may be thousands over its plan's retention.
      await deleteMonitor(deps.monitors, {
        user,
        id: request.params.id,
        onFileError: (err, key) =>
          log.warn({ err, key }, 'could not delete a monitor image; the orphan sweep will'),
      });
      return { success: true, message: 'monitor deleted' };
    },
  );
}
