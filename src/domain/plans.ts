import { BOUNDS } from './bounds.ts';
import type { ImageFormat } from './captures/renderer.ts';

/**
 * Plans are data (docs/plans-and-limits.md). Every limit the product enforces is read from
 * this table; an operator overrides any field per plan with PLANS_FILE.
 */
export type PlanName = 'demo' | 'free' | 'pro';
export const PLAN_NAMES: readonly PlanName[] = ['demo', 'free', 'pro'];

export interface Plan {
  name: PlanName;
  /** Captures per calendar month (UTC); null for the demo, which counts per day. */
  monthly_quota: number | null;
  /** Captures per UTC day per client IP; only the demo uses it. */
  daily_quota: number | null;
  /** Capture requests per minute per account; null means no per-minute limit. */
  rate_per_minute: number | null;
  /**
   * Signed render link requests per minute per API key, a window of their own (a link is
   * public, so strangers replaying it must not use up the account's capture rate); null
   * means no per-minute limit. The demo has no keys and no links.
   */
  link_requests_per_minute: number | null;
  /**
   * Requests per hour per client IP, refused and failed ones included; only the demo uses
   * it (its daily allowance counts only successful captures).
   */
  requests_per_hour: number | null;
  /**
   * Captures of one account (of one IP for the demo) rendering at once on a node; more wait
   * for its earlier ones, within the same deadline.
   */
  concurrent_renders: number;
  max_width: number;
  max_height: number;
  formats: ImageFormat[];
  max_device_scale_factor: number;
  full_page: boolean;
  fresh: boolean;
  retention_hours: number;
  /** Whether captures get a record with an id that can be listed and deleted. */
  listable: boolean;
  /**
   * Async captures (`async: true`) of one account queued or rendering at once; 0: the plan
   * has no async captures (400 plan_restriction).
   */
  max_queued_jobs: number;
  /** Monitors (scheduled captures with change detection) one account may have; 0: none. */
  max_monitors: number;
  /** The shortest `every` a monitor may have, in minutes (15: every 15m is allowed). */
  min_monitor_interval: number;
  /** Captures through a proxy (`proxy`, `proxy_country`: docs/proxies.md). */
  proxies: boolean;
  /** The account's own buckets (docs/destinations.md) it may have; 0: none. */
  storage_destinations: number;
  /** Monthly price in USD cents, shown on the pricing table. */
  price_cents: number;
}

export type PlanTable = Readonly<Record<PlanName, Readonly<Plan>>>;

/** The demo's default allowances, also what demoAllowance falls back to. */
const DEMO_DAILY_QUOTA = 5;
const DEMO_REQUESTS_PER_HOUR = 30;

export const DEFAULT_PLANS: PlanTable = {
  demo: {
    name: 'demo',
    monthly_quota: null,
    daily_quota: DEMO_DAILY_QUOTA,
    rate_per_minute: null,
    link_requests_per_minute: null,
    requests_per_hour: DEMO_REQUESTS_PER_HOUR,
    concurrent_renders: 1,
    max_width: 1280,
    max_height: 720,
    formats: ['png'],
    max_device_scale_factor: 1,
    full_page: false,
    fresh: false,
    retention_hours: 24,
    listable: false,
    max_queued_jobs: 0,
    max_monitors: 0,
    min_monitor_interval: 15,
    proxies: false,
    storage_destinations: 0,
    price_cents: 0,
  },
  free: {
    name: 'free',
    monthly_quota: 100,
    daily_quota: null,
    rate_per_minute: 5,
    link_requests_per_minute: 60,
    requests_per_hour: null,
    concurrent_renders: 1,
    max_width: 1920,
    max_height: 1080,
    formats: ['png', 'jpeg'],
    max_device_scale_factor: 1,
    full_page: true,
    fresh: false,
    retention_hours: 24 * 7,
    listable: false,
    max_queued_jobs: 0,
    max_monitors: 0,
    min_monitor_interval: 15,
    proxies: false,
    storage_destinations: 0,
    price_cents: 0,
  },
  pro: {
    name: 'pro',
    monthly_quota: 5000,
    daily_quota: null,
    rate_per_minute: 60,
    link_requests_per_minute: 600,
    requests_per_hour: null,
    concurrent_renders: 4,
    max_width: 3840,
    max_height: 2160,
    formats: ['png', 'jpeg', 'webp', 'pdf'],
    max_device_scale_factor: 3,
    full_page: true,
    fresh: true,
    retention_hours: 24 * 30,
    listable: true,
    max_queued_jobs: 50,
    max_monitors: 20,
    min_monitor_interval: 15,
    proxies: true,
    storage_destinations: 5,
    price_cents: 900,
  },
};

type FieldCheck = (value: unknown) => string | null;

const positiveIntOrNull =
  (max: number): FieldCheck =>
  (v) =>
    v === null || (Number.isInteger(v) && (v as number) >= 1 && (v as number) <= max)
      ? null
      : `must be an integer from 1 to ${max} or null`;
const positiveInt =
  (max: number): FieldCheck =>
  (v) =>
    Number.isInteger(v) && (v as number) >= 1 && (v as number) <= max
      ? null
      : `must be an integer from 1 to ${max}`;
const bool: FieldCheck = (v) => (typeof v === 'boolean' ? null : 'must be true or false');

const FIELD_CHECKS: Record<Exclude<keyof Plan, 'name'>, FieldCheck> = {
  monthly_quota: positiveIntOrNull(BOUNDS.planFields.maxQuota),
  daily_quota: positiveIntOrNull(BOUNDS.planFields.maxQuota),
  rate_per_minute: positiveIntOrNull(BOUNDS.planFields.maxRatePerMinute),
  link_requests_per_minute: positiveIntOrNull(BOUNDS.planFields.maxRatePerMinute),
  requests_per_hour: positiveIntOrNull(BOUNDS.planFields.maxRequestsPerHour),
  concurrent_renders: positiveInt(BOUNDS.planFields.maxConcurrentRenders),
  max_width: positiveInt(BOUNDS.planFields.maxViewport),
  max_height: positiveInt(BOUNDS.planFields.maxViewport),
  formats: (v) =>
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((f) => f === 'png' || f === 'jpeg' || f === 'webp' || f === 'pdf') &&
    new Set(v).size === v.length
      ? null
      : 'must be a non-empty list of distinct formats among png, jpeg, webp, pdf',
  max_device_scale_factor: (v) =>
    typeof v === 'number' &&
    v >= BOUNDS.capture.minDeviceScaleFactor &&
    v <= BOUNDS.capture.maxDeviceScaleFactor
      ? null
      : `must be a number from ${BOUNDS.capture.minDeviceScaleFactor} to ` +
        `${BOUNDS.capture.maxDeviceScaleFactor}`,
  full_page: bool,
  fresh: bool,
  retention_hours: positiveInt(BOUNDS.planFields.maxRetentionHours),
  listable: bool,
  max_queued_jobs: (v) =>
    Number.isInteger(v) && (v as number) >= 0 && (v as number) <= BOUNDS.planFields.maxQueuedJobs
      ? null
      : `must be an integer from 0 to ${BOUNDS.planFields.maxQueuedJobs}`,
  max_monitors: (v) =>
    Number.isInteger(v) && (v as number) >= 0 && (v as number) <= BOUNDS.planFields.maxMonitors
      ? null
      : `must be an integer from 0 to ${BOUNDS.planFields.maxMonitors}`,
  // In minutes; a monitor's `every` is one of 15m, 1h, 6h, 1d, 7d, so 7 days is the top.
  min_monitor_interval: positiveInt(BOUNDS.planFields.maxMonitorIntervalMinutes),
  proxies: bool,
  storage_destinations: (v) =>
    Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 100
      ? null
      : 'must be an integer from 0 to 100',
  price_cents: (v) =>
    Number.isInteger(v) && (v as number) >= 0 ? null : 'must be a non-negative integer',
};

export class PlansFileError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid PLANS_FILE:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'PlansFileError';
    this.problems = problems;
  }
}

/**
 * Applies a PLANS_FILE document (already JSON-parsed) over the defaults. Every problem is
 * collected so the operator sees them all at once.
 */
export function applyPlanOverrides(base: PlanTable, overrides: unknown): PlanTable {
  const problems: string[] = [];
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)) {
    throw new PlansFileError(['must be a JSON object keyed by plan name (demo, free, pro)']);
  }
  const result = structuredClone(base) as Record<PlanName, Plan>;
  for (const [planName, fields] of Object.entries(overrides)) {
    if (!PLAN_NAMES.includes(planName as PlanName)) {
      problems.push(`unknown plan "${planName}" (known: ${PLAN_NAMES.join(', ')})`);
      continue;
    }
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
      problems.push(`${planName} must be an object of fields`);
      continue;
    }
    const plan = result[planName as PlanName];
    for (const [field, value] of Object.entries(fields)) {
      const check = FIELD_CHECKS[field as keyof typeof FIELD_CHECKS];
      if (check === undefined) {
        problems.push(`${planName}.${field} is not a plan field`);
        continue;
      }
      const problem = check(value);
      if (problem) {
        problems.push(`${planName}.${field} ${problem}, got ${JSON.stringify(value)}`);
        continue;
      }
      (plan as unknown as Record<string, unknown>)[field] = value;
    }
  }
  for (const name of ['free', 'pro'] as const) {
    if (result[name].monthly_quota === null) problems.push(`${name}.monthly_quota is required`);
  }
  if (result.demo.daily_quota === null) problems.push('demo.daily_quota is required');
  if (result.demo.requests_per_hour === null) {
    problems.push('demo.requests_per_hour is required');
  }
  if (problems.length > 0) throw new PlansFileError(problems);
  return result;
}

/**
 * The demo's daily allowance and hourly request budget. applyPlanOverrides refuses a table
 * without them; a table built by hand falls back to the defaults.
 */
export function demoAllowance(plans: PlanTable): { perDay: number; perHour: number } {
  return {
    perDay: plans.demo.daily_quota ?? DEMO_DAILY_QUOTA,
    perHour: plans.demo.requests_per_hour ?? DEMO_REQUESTS_PER_HOUR,
  };
}

export const isPlanName = (value: string): value is PlanName =>
  PLAN_NAMES.includes(value as PlanName);
