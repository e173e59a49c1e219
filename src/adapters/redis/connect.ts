import { Redis, type RedisOptions } from 'ioredis';

/** The Redis connections a node holds: commands, and one in subscriber mode for pub/sub. */
export interface RedisClients {
  commands: Redis;
  subscriber: Redis;
  /** Resolves once the command connection is up, or after `ms` (boot goes on and recovers). */
  ready(ms: number): Promise<boolean>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Budget for one command on a live connection. */
const COMMAND_TIMEOUT_MS = 2_000;
const CONNECT_TIMEOUT_MS = 2_000;
/** Reconnect backoff: 50 ms, 100 ms, ... capped at 1 s, forever. */
const retryStrategy = (times: number) => Math.min(times * 50, 1_000);

/**
 * ioredis clients that fail fast while Redis is down: no offline queue (a command on a
 * broken connection is rejected at once, so a limit check answers 503 instead of hanging),
 * one retry per command, and reconnection in the background so service resumes by itself.
 */
export function connectRedis(url: URL): RedisClients {
  const base: RedisOptions = {
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy,
    // An unanswered connection never leaves a request hanging.
    commandTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
  };
  // Commands of one event-loop turn (the rate checks of requests that arrived together) go
  // out as one pipeline: one write and one read for all of them.
  const commands = new Redis(url.toString(), {
    ...base,
    enableOfflineQueue: false,
    enableAutoPipelining: true,
  });
  // The subscriber queues its SUBSCRIBE until connected and resubscribes after a reconnect.
  const subscriber = new Redis(url.toString(), {
    ...base,
    enableOfflineQueue: true,
    autoResubscribe: true,
    commandTimeout: undefined,
  });
  // Connection errors surface through the commands that fail; an unhandled 'error' event
  // would only add log noise (ioredis prints them otherwise).
  commands.on('error', () => {});
  subscriber.on('error', () => {});
  return {
    commands,
    subscriber,
    ready: (ms) =>
      new Promise((resolve) => {
        if (commands.status === 'ready') return resolve(true);
        const timer = setTimeout(() => {
          commands.off('ready', onReady);
          resolve(false);
        }, ms);
        const onReady = () => {
          clearTimeout(timer);
          resolve(true);
        };
        commands.once('ready', onReady);
      }),
    ping: async () => {
      await commands.ping();
    },
    close: async () => {
      // QUIT while connected; while Redis is away nothing is pending worth waiting for.
      await Promise.all(
        [commands, subscriber].map(async (c) => {
          if (c.status !== 'ready') return c.disconnect();
          await withTimeout(c.quit(), 1_000).catch(() => c.disconnect());
        }),
      );
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
