import type { Clock } from '../lib/time.ts';
import type { CounterFactory, WindowCounter } from './limits.ts';
import type { PlanTable } from './plans.ts';
import type { Store } from './store.ts';

/** What every use case may depend on; built once in deps.ts. */
export interface DomainContext {
  store: Store;
  clock: Clock;
  plans: PlanTable;
  counters: CounterFactory;
  loginThrottle: { byEmail: WindowCounter; byIp: WindowCounter };
}

/** Bounds of the account surface (DECISIONS.md section 5). */
export const ACCOUNT_LIMITS = {
  passwordMin: 8,
  passwordMax: 256,
  emailMax: 254,
  sessionLifetimeMs: 30 * 24 * 60 * 60 * 1000,
  loginFailuresPerEmail: 10,
  loginFailuresPerIp: 100,
  loginWindowMs: 15 * 60 * 1000,
  maxActiveKeys: 20,
  keyNameMax: 100,
  /** last_used_at is written at most this often per key. */
  keyTouchIntervalMs: 60 * 1000,
} as const;
