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
