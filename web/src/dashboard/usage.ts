/** GET /v1/account/usage. */
export interface AccountUsage {
  plan: string;
  used: number;
  limit: number;
  remaining: number;
  period_start: string;
  resets_at: string;
  rate_limit: { limit: number | null; remaining: number | null; reset_time: number | null };
  days: Array<{ day: string; count: number }>;
}
