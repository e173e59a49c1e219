/**
 * The monitors page's requests, without React: the create form's settings beside the
 * playground's capture options, the bodies they make, and the words for a monitor's state.
 */
import type { CreateMonitorBody, Monitor, MonitorRun, UpdateMonitorBody } from '../../api/types.ts';
import { normalizeUrl } from '../../shared/format.ts';
import { captureBody, DEFAULT_OPTIONS, type Options } from '../playground/capture-body.ts';

export type Every = CreateMonitorBody['every'];

/**
 * The intervals, in the API's order, with their length in minutes (to hold them against the
 * plan's `min_monitor_interval`). Keyed by the API document's own list: an interval added to
 * or taken from the API fails the typecheck here.
 */
const EVERY: Record<Every, { label: string; minutes: number }> = {
  '15m': { label: 'Every 15 minutes', minutes: 15 },
  '1h': { label: 'Every hour', minutes: 60 },
  '6h': { label: 'Every 6 hours', minutes: 360 },
  '1d': { label: 'Every day', minutes: 1440 },
  '7d': { label: 'Every week', minutes: 10080 },
};
export const EVERY_CHOICES = Object.entries(EVERY).map(([value, e]) => ({
  value: value as Every,
  ...e,
}));

/** "Every hour" for `1h`; an interval this page does not know is shown as the API wrote it. */
export const everyLabel = (every: string): string =>
  EVERY[every as Every]?.label ?? `Every ${every}`;

/** The monitor's own fields, as typed in the form (the capture options are the playground's). */
export interface MonitorSettings {
  name: string;
  every: Every;
  /** Per cent of the pixels, as typed: "0.1" is the API's 0.001. */
  thresholdPercent: string;
  /** One CSS selector a line. */
  ignoreSelectors: string;
  webhookUrl: string;
}

export const DEFAULT_SETTINGS: MonitorSettings = {
  name: '',
  every: '1h',
  thresholdPercent: '0.1',
  ignoreSelectors: '',
  webhookUrl: '',
};

/** The create form's capture options: the playground's, with no page filled in. */
export const MONITOR_OPTIONS: Options = { ...DEFAULT_OPTIONS, url: '' };

/** The threshold's bounds in per cent (the API's 0.0001 to 1). */
export const THRESHOLD_MIN_PERCENT = 0.01;
export const THRESHOLD_MAX_PERCENT = 100;

/** A threshold typed in per cent as the API's fraction, or null when out of bounds. */
export function parseThreshold(percent: string): number | null {
  const text = percent.trim().replace(',', '.');
  const n = Number(text);
  if (text === '' || !Number.isFinite(n)) return null;
  if (n < THRESHOLD_MIN_PERCENT || n > THRESHOLD_MAX_PERCENT) return null;
  // Rounded to the API's precision, so 0.1 % is 0.001 and not 0.0010000000000000002.
  return Math.round(n * 100) / 10_000;
}

/** The API's fraction in per cent, as the form shows it. */
export const thresholdPercent = (fraction: number): string =>
  String(Math.round(fraction * 1_000_000) / 10_000);

const percentFormat = new Intl.NumberFormat(undefined, {
  style: 'percent',
  maximumFractionDigits: 2,
});
/** 0.0312 as "3.12%". */
export const formatShare = (fraction: number): string => percentFormat.format(fraction);

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/**
 * What is missing or out of bounds in the form, in words, or null. The API checks it all
 * again; this only saves a round trip for what the form can see.
 */
export function formProblem(o: Options, s: MonitorSettings): string | null {
  if (o.source === 'html' ? o.document.trim() === '' : o.url.trim() === '') {
    return o.source === 'html'
      ? 'Paste the HTML document to watch.'
      : 'Enter the address of the page to watch.';
  }
  if (parseThreshold(s.thresholdPercent) === null) {
    return `The change threshold is a share of the pixels from ${THRESHOLD_MIN_PERCENT}% to ${THRESHOLD_MAX_PERCENT}%.`;
  }
  return null;
}

/**
 * POST /v1/account/monitors: the target (a URL or an HTML document) and the capture options
 * the playground's fields make, then the monitor's own fields, each only when filled in.
 */
export function monitorBody(o: Options, s: MonitorSettings): CreateMonitorBody {
  const html = o.source === 'html';
  // The playground's body for the same form, less its target (its `base_url` stays an option).
  const {
    url: _url,
    html: _html,
    ...options
  } = captureBody({ ...o, source: html ? 'html' : 'url' }) as Record<string, unknown>;
  const ignore = lines(s.ignoreSelectors);
  const threshold = parseThreshold(s.thresholdPercent);
  return {
    ...(s.name.trim() ? { name: s.name.trim() } : {}),
    ...(html ? { html: o.document } : { url: normalizeUrl(o.url) }),
    ...(Object.keys(options).length > 0 ? { options } : {}),
    every: s.every,
    ...(threshold !== null ? { threshold } : {}),
    ...(ignore.length > 0 ? { ignore_selectors: ignore } : {}),
    ...(s.webhookUrl.trim() ? { webhook_url: normalizeUrl(s.webhookUrl) } : {}),
  };
}

/** The edit form's fields: what it may change of a monitor. */
export interface MonitorEdit {
  name: string;
  every: Every;
  thresholdPercent: string;
  webhookUrl: string;
}

export const editOf = (m: Monitor): MonitorEdit => ({
  name: m.name ?? '',
  every: m.every as Every,
  thresholdPercent: thresholdPercent(m.threshold),
  webhookUrl: m.webhook_url ?? '',
});

/**
 * PATCH /v1/account/monitors/{id}: only what the form changed. An emptied webhook URL stops
 * the events (null); a name cannot be emptied, only replaced.
 */
export function updateBody(m: Monitor, e: MonitorEdit): UpdateMonitorBody {
  const before = editOf(m);
  const threshold = parseThreshold(e.thresholdPercent);
  const webhook = e.webhookUrl.trim();
  return {
    ...(e.name.trim() && e.name.trim() !== before.name ? { name: e.name.trim() } : {}),
    ...(e.every !== before.every ? { every: e.every } : {}),
    ...(threshold !== null && threshold !== m.threshold ? { threshold } : {}),
    ...(webhook !== before.webhookUrl
      ? { webhook_url: webhook ? normalizeUrl(webhook) : null }
      : {}),
  };
}

/** What a monitor is called on the page: its name, else its page, else "HTML document". */
export function monitorLabel(m: Monitor): string {
  if (m.name) return m.name;
  if (m.url) return m.url.replace(/^https?:\/\//, '').replace(/\/$/, '');
  return 'HTML document';
}

export const STATUS_LABELS: Record<Monitor['status'], string> = {
  active: 'Active',
  paused: 'Paused',
  paused_quota: 'Paused: quota used up',
};

/**
 * The image a changed run was compared with: the newest succeeded run before it in the
 * timeline, or null when none is loaded. A run is compared with the monitor's last
 * successful image as it stands when the run starts, which is the run before it that
 * succeeded; the run's answer carries no link to it, so the page reads it off the timeline it
 * already has. (Two runs that overlap, a run now during a scheduled one, were both compared
 * with the image before them; the later one is then shown against the earlier, a rare and
 * harmless difference.)
 */
export function previousSuccess(runs: readonly MonitorRun[], index: number): MonitorRun | null {
  for (let i = index + 1; i < runs.length; i++) {
    const run = runs[i];
    if (run && run.status === 'succeeded' && run.image_url) return run;
  }
  return null;
}
