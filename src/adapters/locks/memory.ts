import type { RenderLocks } from '../../domain/captures/ports.ts';

/** One node: every lock is granted (the in-process SingleFlight joins identical captures). */
export function createMemoryRenderLocks(): RenderLocks {
  const lease = { release: async () => {} };
  return {
    acquire: async () => lease,
    held: async () => false,
  };
}
