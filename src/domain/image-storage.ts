/**
 * Where images live (the port; adapters/storage implements it on local disk or S3).
 */
export interface StoredImage {
  body: Buffer;
  contentType: string;
  size: number;
}

export interface ImageStorage {
  readonly kind: 'disk' | 's3';
  /** Stores bytes under key (e.g. `ab12...ef.png`); overwrites. */
  put(key: string, body: Buffer, meta: { contentType: string; expiresAt: Date }): Promise<void>;
  /** null when absent. */
  get(key: string): Promise<StoredImage | null>;
  /** Idempotent: deleting a missing key is fine. */
  delete(key: string): Promise<void>;
  /**
   * Keys of images stored before `olderThan`, a page of at most about `limit` from `cursor`
   * (null: the start); `next` is null after the last page. For the orphan sweep.
   */
  list(options: {
    olderThan: Date;
    cursor: string | null;
    limit: number;
  }): Promise<{ keys: string[]; next: string | null }>;
  /**
   * Whether the stored object was written by this deployment, so the orphan sweep may
   * delete it: a bucket can be shared (staging beside production, another tool's objects).
   * Local disk under DATA_DIR is this deployment's alone.
   */
  owns(key: string): Promise<boolean>;
  /** Throws AppError('storage_error') when the backend is not usable (readiness probe). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
