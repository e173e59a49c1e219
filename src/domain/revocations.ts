/**
 * Key revocations as events, so an in-flight capture on any node can be ended the moment
 * its key is revoked. In-process for one node; Redis pub/sub for several.
 */
export interface RevocationBus {
  publish(keyId: number): Promise<void>;
  /** Returns the unsubscribe function. */
  subscribe(listener: (keyId: number) => void): () => void;
  close(): Promise<void>;
}
