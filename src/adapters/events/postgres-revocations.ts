import pg from 'pg';
import type { RevocationBus } from '../../domain/revocations.ts';
import type { Logger } from '../../lib/logger.ts';

/** One channel for the whole database; the payload names the schema (deployment) it is for. */
const CHANNEL = 'shotsmith_key_revoked';
/** Reconnect delays of the LISTEN connection after a drop: doubling from the first to the cap. */
const RECONNECT_FIRST_MS = 100;
const RECONNECT_MAX_MS = 5_000;
/**
 * A LISTEN connection only receives, so a half-open one (peer gone without a FIN: a NAT or
 * failover dropped it) would stay silent for good: it is asked `SELECT 1` this often and
 * reopened when no answer comes in time. TCP keepalive is on as well.
 */
const HEARTBEAT_MS = 10_000;
const HEARTBEAT_TIMEOUT_MS = 5_000;

export interface PostgresRevocationsOptions {
  url: URL;
  /** The deployment's schema; several deployments may share one database. */
  schema: string | undefined;
  /** Sends the NOTIFY (the app's pool, through whatever query runner it has). */
  notify(channel: string, payload: string): Promise<void>;
  logger: Logger;
  /** How often the LISTEN connection is asked `SELECT 1` (default 10 s). */
  heartbeatMs?: number;
  /** How long that may take before the connection is reopened (default 5 s). */
  heartbeatTimeoutMs?: number;
}

/** The application name of the LISTEN connection (operators find it in pg_stat_activity). */
export const listenConnectionName = (schema: string | undefined): string =>
  `shotsmith-revocations:${schema ?? 'public'}`.slice(0, 63);

/** A notification's payload is `<schema>|<key id>`: the key id when it is for `scope`. */
export function revokedKeyId(payload: string, scope: string): number | null {
  const at = payload.lastIndexOf('|');
  if (at < 0 || payload.slice(0, at) !== scope) return null;
  const keyId = Number(payload.slice(at + 1));
  return Number.isSafeInteger(keyId) ? keyId : null;
}

/**
 * Revocations broadcast with PostgreSQL `LISTEN/NOTIFY`, for several nodes on PostgreSQL
 * without Redis. LISTEN needs a connection of its own that stays open (`ListenConnection`);
 * a notification sent while it was down is lost: the capture's own check of the key row
 * before it answers covers that gap.
 */
export function createPostgresRevocations(
  options: PostgresRevocationsOptions,
): RevocationBus & { ready(timeoutMs: number): Promise<boolean> } {
  const scope = options.schema ?? 'public';
  const listeners = new Set<(keyId: number) => void>();
  const deliver = (keyId: number) => {
    for (const l of listeners) l(keyId);
  };
  const connection = new ListenConnection({
    url: options.url,
    name: listenConnectionName(options.schema),
    heartbeatMs: options.heartbeatMs ?? HEARTBEAT_MS,
    heartbeatTimeoutMs: options.heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS,
    logger: options.logger,
    onPayload: (payload) => {
      const keyId = revokedKeyId(payload, scope);
      if (keyId !== null) deliver(keyId);
    },
  });
  connection.open();

  return {
    ready: (timeoutMs) => connection.ready(timeoutMs),
    async publish(keyId) {
      // Local listeners hear it at once, whatever the database does.
      deliver(keyId);
      await options.notify(CHANNEL, `${scope}|${keyId}`).catch(() => {});
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      listeners.clear();
      await connection.close();
    },
  };
}

interface ListenOptions {
  url: URL;
  name: string;
  heartbeatMs: number;
  heartbeatTimeoutMs: number;
  logger: Logger;
  onPayload(payload: string): void;
}

/**
 * The connection that LISTENs: opened at once, reopened with backoff after any drop (an
 * error, the server ending it, or a heartbeat left unanswered), and LISTENing again each time.
 */
class ListenConnection {
  readonly #options: ListenOptions;
  #closed = false;
  #client: pg.Client | null = null;
  #retryTimer: NodeJS.Timeout | null = null;
  /** The current connection's heartbeat. */
  #heartbeat: NodeJS.Timeout | null = null;
  #delay = RECONNECT_FIRST_MS;
  #markListening!: () => void;
  readonly #listening = new Promise<void>((resolve) => {
    this.#markListening = resolve;
  });

  constructor(options: ListenOptions) {
    this.#options = options;
  }

  open(): void {
    void this.#connect();
  }

  /** Whether the first LISTEN is in place within `timeoutMs`. */
  async ready(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([this.#listening.then(() => true), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#stopHeartbeat();
    const c = this.#client;
    this.#client = null;
    await c?.end().catch(() => {});
  }

  async #connect(): Promise<void> {
    const c = new pg.Client({
      connectionString: this.#options.url.toString(),
      application_name: this.#options.name,
      keepAlive: true,
    });
    this.#client = c;
    let dropped = false;
    const drop = (err?: Error) => {
      if (dropped) return;
      dropped = true;
      this.#dropped(c, err);
    };
    // An error on an idle client (server restart) must not crash the process.
    c.on('error', drop);
    c.on('end', () => drop());
    c.on('notification', (msg) => {
      if (msg.channel === CHANNEL && msg.payload) this.#options.onPayload(msg.payload);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
      this.#delay = RECONNECT_FIRST_MS;
      this.#markListening();
      if (this.#closed) {
        await c.end().catch(() => {});
        return;
      }
      this.#startHeartbeat(c, drop);
    } catch (err) {
      drop(err as Error);
    }
  }

  #dropped(c: pg.Client, err: Error | undefined): void {
    if (this.#client === c) {
      this.#client = null;
      this.#stopHeartbeat();
    }
    c.removeAllListeners('notification');
    c.end().catch(() => {});
    if (this.#closed) return;
    this.#options.logger.warn(
      { err: err?.message },
      'revocation LISTEN connection lost; reconnecting',
    );
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#retryTimer) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      void this.#connect();
    }, this.#delay);
    this.#retryTimer.unref();
    this.#delay = Math.min(this.#delay * 2, RECONNECT_MAX_MS);
  }

  /** `SELECT 1` every heartbeatMs; no answer within heartbeatTimeoutMs drops the connection. */
  #startHeartbeat(c: pg.Client, drop: (err: Error) => void): void {
    let beating = false;
    const { heartbeatMs, heartbeatTimeoutMs } = this.#options;
    this.#heartbeat = setInterval(() => {
      if (beating) return;
      beating = true;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('heartbeat unanswered')), heartbeatTimeoutMs);
      });
      Promise.race([c.query('SELECT 1'), late])
        .catch((err: unknown) => drop(err as Error))
        .finally(() => {
          clearTimeout(timer);
          beating = false;
        });
    }, heartbeatMs);
    this.#heartbeat.unref();
  }

  #stopHeartbeat(): void {
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#heartbeat = null;
  }
}
