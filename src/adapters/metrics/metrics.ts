import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Pool figures read at scrape time. */
export interface PoolStats {
  inUse: number;
  queued: number;
  restarts: number;
}

/**
 * Prometheus metrics, one registry per app (so tests and several apps in one process do
 * not collide). Served at GET /metrics.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'route' | 'method' | 'status'>;
  readonly captureSeconds: Histogram<'cache'>;
  readonly refusals: Counter<'reason'>;
  /** Retention sweeps by outcome: ran here, or skipped because another node held the lock. */
  readonly sweeps: Counter<'outcome'>;
  readonly sweptImages: Counter;
  private poolStats: () => PoolStats = () => ({ inUse: 0, queued: 0, restarts: 0 });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'shotsmith_process_' });
    this.requests = new Counter({
      name: 'shotsmith_http_requests_total',
      help: 'HTTP requests by route pattern, method and status',
      labelNames: ['route', 'method', 'status'],
      registers: [this.registry],
    });
    this.captureSeconds = new Histogram({
      name: 'shotsmith_capture_duration_seconds',
      help: 'Capture request latency by cache outcome',
      labelNames: ['cache'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32],
      registers: [this.registry],
    });
    this.refusals = new Counter({
      name: 'shotsmith_refusals_total',
      help: 'Requests refused by a limit or a guard (quota, rate, demo, ssrf)',
      labelNames: ['reason'],
      registers: [this.registry],
    });
    this.sweeps = new Counter({
      name: 'shotsmith_retention_sweeps_total',
      help: 'Retention sweeps by outcome (ran on this node, skipped: another node was sweeping)',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.sweptImages = new Counter({
      name: 'shotsmith_retention_swept_total',
      help: 'Expired records (and their images) deleted by this node',
      registers: [this.registry],
    });
    const pool = () => this.poolStats();
    new Gauge({
      name: 'shotsmith_browser_pool_in_use',
      help: 'Render slots busy',
      registers: [this.registry],
      collect() {
        this.set(pool().inUse);
      },
    });
    new Gauge({
      name: 'shotsmith_browser_pool_queued',
      help: 'Captures waiting for a render slot',
      registers: [this.registry],
      collect() {
        this.set(pool().queued);
      },
    });
    new Gauge({
      name: 'shotsmith_browser_restarts',
      help: 'Browser restarts since the process started (crash, disconnect or recycling)',
      registers: [this.registry],
      collect() {
        this.set(pool().restarts);
      },
    });
  }

  watchPool(stats: () => PoolStats): void {
    this.poolStats = stats;
  }

  refused(reason: 'quota' | 'rate' | 'demo' | 'ssrf' | 'login'): void {
    this.refusals.inc({ reason });
  }
}
