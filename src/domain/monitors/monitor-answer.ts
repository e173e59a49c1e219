import { toIso } from '../../lib/time.ts';
import type { Monitor, MonitorRun } from '../store.ts';
import { htmlDigest } from './monitor-rules.ts';

/**
 * A monitor as the API answers it (docs/api.md, "Monitors"). An html monitor's document (up
 * to 1 MiB, kept for its runs) is never answered, only its size and SHA-256: the caller sent
 * it, and a list of monitors stays small.
 */
export function monitorAnswer(m: Monitor): Record<string, unknown> {
  const { url, html } = m.input;
  // Worked out at creation; a monitor made before that has it worked out here.
  const digest = m.input.htmlDigest ?? (html !== undefined ? htmlDigest(html) : undefined);
  // Credentials for the target are kept encrypted and never answered (job-credentials.ts).
  const { sealed_credentials: _sealed, ...options } = m.input.options;
  return {
    id: m.id,
    name: m.name,
    ...(url !== undefined ? { url } : {}),
    ...(digest !== undefined ? { html_bytes: digest.bytes, html_sha256: digest.sha256 } : {}),
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
