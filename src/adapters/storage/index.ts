import type { ImageStorage } from '../../domain/image-storage.ts';
import { createDiskStorage } from './disk-storage.ts';
import type { S3Options } from './s3-storage.ts';

export type { DiskStorageOptions } from './disk-storage.ts';
export type { S3Options } from './s3-storage.ts';

export type StorageConfig = { kind: 'disk'; dir: string } | ({ kind: 's3' } & S3Options);

/**
 * Builds the configured image storage (docs/deployment.md: disk by default, S3 to scale out).
 * `owner` tags what this deployment writes to a bucket, for the orphan sweep.
 */
export async function createStorage(
  config: StorageConfig,
  options: { owner?: string } = {},
): Promise<ImageStorage> {
  switch (config.kind) {
    case 'disk':
      return createDiskStorage({ dir: config.dir });
    case 's3': {
      const { kind: _kind, ...s3 } = config;
      // Loaded only when configured: the AWS SDK is the slowest import of the service.
      const { createS3Storage } = await import('./s3-storage.ts');
      return createS3Storage({ ...s3, ...(options.owner ? { owner: options.owner } : {}) });
    }
    default: {
      const unknown: never = config;
      throw new Error(`Unknown storage kind: ${String((unknown as { kind?: unknown }).kind)}`);
    }
  }
}
