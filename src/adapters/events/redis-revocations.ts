import type { Redis } from 'ioredis';
import type { RevocationBus } from '../../domain/revocations.ts';

/**
 * Revocations broadcast over Redis pub/sub so an in-flight capture on any node ends at
 * once. A message lost while Redis is down is covered by the capture's own re-check of the
 * key row before it answers.
 */
export function createRedisRevocations(
  publisher: Redis,
  subscriber: Redis,
  prefix = 'shotsmith:',
): RevocationBus {
  const channel = `${prefix}key-revoked`;
  const listeners = new Set<(keyId: number) => void>();
  const onMessage = (from: string, message: string) => {
    if (from !== channel) return;
    const keyId = Number(message);
    if (Number.isSafeInteger(keyId)) for (const l of listeners) l(keyId);
  };
  subscriber.on('message', onMessage);
  void subscriber.subscribe(channel).catch(() => {});
  return {
    async publish(keyId) {
      // Local listeners hear it at once, whatever Redis does.
      for (const l of listeners) l(keyId);
      await publisher.publish(channel, String(keyId)).catch(() => {});
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      // The connections belong to whoever opened them (deps.ts closes them).
      listeners.clear();
      subscriber.off('message', onMessage);
    },
  };
}
