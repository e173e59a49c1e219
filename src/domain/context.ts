import type { SecretDeriver } from '../lib/server-secret.ts';
import type { Clock } from '../lib/time.ts';
import type { CounterFactory, WindowCounter } from './limits.ts';
import type { PlanTable } from './plans.ts';
import type { QuotaHolds } from './quota/quota-holds.ts';
import type { Store } from './store.ts';

/** What every use case may depend on; built once by the composition root (parts/contexts.ts). */
export interface DomainContext {
  store: Store;
  clock: Clock;
  plans: PlanTable;
  /** Holds on the units of this node's captures in flight, renewed while they run. */
  quotaHolds: QuotaHolds;
  counters: CounterFactory;
  /** Secrets derived from the server secret (signing secrets). */
  secrets: SecretDeriver;
  loginThrottle: { byEmail: WindowCounter; byIp: WindowCounter };
}
