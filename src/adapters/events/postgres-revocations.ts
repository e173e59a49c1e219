import pg from 'pg';
import type { RevocationBus } from '../../domain/revocations.ts';

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
  logger?: { warn(obj: object, msg: string): void };
}

/**
 * Revocations broadcast with PostgreSQL `LISTEN/NOTIFY`, for several nodes on PostgreSQL
 * without Redis. LISTEN needs a connection of its own that stays open; when it drops it is
 * reopened with backoff and LISTENs again. A notification sent while it was down is lost:
 * the capture's own check of the key row before it answers covers that gap.
 */
export function createPostgresRevocations(
  options: PostgresRevocationsOptions,
): RevocationBus & { ready(timeoutMs: number): Promise<boolean> } {
  const scope = options.schema ?? 'public';
  const listeners = new Set<(keyId: number) => void>();
  const deliver = (keyId: number) => {
    for (const l of listeners) l(keyId);
  };
  let closed = false;
  let client: pg.Client | null = null;
  let retryTimer: NodeJS.Timeout | null = null;
  /** The current connection's heartbeat. */
  let heartbeat: NodeJS.Timeout | null = null;
  let delay = RECONNECT_FIRST_MS;
  let markListening!: () => void;
  const listening = new Promise<void>((resolve) => {
    markListening = resolve;
  });

  const onNotification = (msg: pg.Notification) => {
    if (msg.channel !== CHANNEL || !msg.payload) return;
    const at = msg.payload.lastIndexOf('|');
    if (msg.payload.slice(0, at) !== scope) return;
    const keyId = Number(msg.payload.slice(at + 1));
    if (Number.isSafeInteger(keyId)) deliver(keyId);
  };

  const scheduleReconnect = () => {
    if (closed || retryTimer) return;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      void connect();
    }, delay);
    retryTimer.unref();
    delay = Math.min(delay * 2, RECONNECT_MAX_MS);
  };

  const connect = async () => {
    const c = new pg.Client({
      connectionString: options.url.toString(),
      // Names the connection in pg_stat_activity (operators and tests can find it).
      application_name: `shotsmith-revocations:${scope}`.slice(0, 63),
      keepAlive: true,
    });
    client = c;
    let dropped = false;
    const drop = (err?: Error) => {
      if (dropped) return;
      dropped = true;
      if (heartbeat) clearInterval(heartbeat);
      heartbeat = null;
      if (client === c) client = null;
      c.removeAllListeners('notification');
      c.end().catch(() => {});
      if (!closed) {
        options.logger?.warn(
          { err: err?.message },
          'revocation LISTEN connection lost; reconnecting',
        );
        scheduleReconnect();
      }
    };
    // An error on an idle client (server restart) must not crash the process.
    c.on('error', drop);
    c.on('end', () => drop());
    c.on('notification', onNotification);
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
      delay = RECONNECT_FIRST_MS;
      markListening();
      if (closed) {
        await c.end().catch(() => {});
        return;
      }
      let beating = false;
      heartbeat = setInterval(() => {
        if (beating || dropped) return;
        beating = true;
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('heartbeat unanswered')), HEARTBEAT_TIMEOUT_MS);
        });
        Promise.race([c.query('SELECT 1'), late])
          .catch((err: unknown) => drop(err as Error))
          .finally(() => {
            clearTimeout(timer);
            beating = false;
          });
      }, HEARTBEAT_MS);
      heartbeat.unref();
    } catch (err) {
      drop(err as Error);
    }
  };
  void connect();

  return {
    /** Whether the first LISTEN is in place within `timeoutMs`. */
    async ready(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      try {
        return await Promise.race([listening.then(() => true), late]);
      } finally {
        clearTimeout(timer);
      }
    },
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
      closed = true;
      listeners.clear();
      if (retryTimer) clearTimeout(retryTimer);
      const c = client;
      client = null;
      if (heartbeat) clearInterval(heartbeat);
      await c?.end().catch(() => {});
    },
  };
}
