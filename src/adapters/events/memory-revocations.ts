import { EventEmitter } from 'node:events';
import type { RevocationBus } from '../../domain/revocations.ts';

export function createMemoryRevocations(): RevocationBus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    async publish(keyId) {
      emitter.emit('revoked', keyId);
    },
    subscribe(listener) {
      emitter.on('revoked', listener);
      return () => emitter.off('revoked', listener);
    },
    async close() {
      emitter.removeAllListeners();
    },
  };
}
