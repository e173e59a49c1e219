import type { JsonBody, Plan } from '../api/types.ts';
import { api } from './api.ts';
import { formatNumber, formatRetention } from './format.ts';

export type { Plan };

export async function fetchPlans(signal?: AbortSignal): Promise<Plan[]> {
  return (await api<JsonBody<'/v1/plans', 'get', 200>>('/v1/plans', signal ? { signal } : {})).data;
}

export interface PlanFact {
  label: string;
  value: string;
  /** A yes/no fact, drawn with a mark as well as the word. */
  available?: boolean;
}

const yesNo = (label: string, available: boolean): PlanFact => ({
  label,
  value: available ? 'Yes' : 'No',
  available,
});

/** The rows of the pricing table, in order, generated from the plan data. */
export function planFacts(plan: Plan): PlanFact[] {
  const demo = plan.name === 'demo';
  const quota =
    plan.monthly_quota !== null
      ? `${formatNumber(plan.monthly_quota)} per month`
      : plan.daily_quota !== null
        ? `${formatNumber(plan.daily_quota)} per day${demo ? ' per visitor' : ''}`
        : 'Unlimited';
  return [
    { label: 'Screenshots', value: quota },
    {
      label: 'Rate limit',
      value: plan.rate_per_minute === null ? 'None' : `${plan.rate_per_minute} per minute`,
    },
    yesNo('API access', !demo),
    { label: 'Formats', value: plan.formats.map((f) => f.toUpperCase()).join(', ') },
    {
      label: 'Viewport',
      value: `${demo ? 'Fixed' : 'Up to'} ${formatNumber(plan.max_width)}×${formatNumber(plan.max_height)}`,
    },
    {
      label: 'Device scale',
      value:
        plan.max_device_scale_factor > 1 ? `1× to ${plan.max_device_scale_factor}×` : '1× only',
    },
    yesNo('Full-page capture', plan.full_page),
    yesNo('Fresh render on demand', plan.fresh),
    { label: 'Image hosting', value: formatRetention(plan.retention_hours) },
    yesNo('History and delete', plan.listable),
  ];
}

/** The number of rows planFacts gives, for skeletons of the same height. */
export const PLAN_FACT_ROWS = 10;
