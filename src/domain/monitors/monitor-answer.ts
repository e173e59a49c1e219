import { toIso } from '../../lib/time.ts';
import type { Monitor, MonitorRun } from '../store.ts';

/** A monitor as the API answers it (docs/api.md, "Monitors"). */
export function monitorAnswer(m: Monitor): Record<string, unknown> {
  const { url, html } = m.input;
  // Credentials for the target are kept encrypted and never answered (job-credentials.ts).
  const { sealed_credentials: _sealed, ...options } = m.input.options;
  return {
    id: m.id,
    name: m.name,
    ...(url !== undefined ? { url } : {}),
    ...(html !== undefined ? { html } : {}),
    options,
    every: m.every,
    threshold: m.threshold,
    ignore_selectors: m.ignoreSelectors,
    ...(m.webhookUrl !== null ? { webhook_url: m.webhookUrl } : {}),
    status: m.status,
    next_run_at: toIso(m.nextRunAt),
    created_at: toIso(m.createdAt),
    last_run_at: m.lastRunAt === null ? null : toIso(m.lastRunAt),
    last_change_at: m.lastChangeAt === null ? null : toIso(m.lastChangeAt),
  };
}

export function runAnswer(r: MonitorRun): Record<string, unknown> {
  return {
    id: r.id,
    at: toIso(r.at),
    status: r.status,
    changed: r.changed,
    changed_fraction: r.changedFraction,
    image_url: r.imageUrl,
    ...(r.diffUrl !== null ? { diff_url: r.diffUrl } : {}),
    ...(r.error !== null ? { error: r.error } : {}),
  };
}
