/** The storage part: images on local disk, or in an S3-compatible bucket. */
import { createStorage } from '../adapters/storage/index.ts';
import type { Config } from '../config/config.ts';
import type { ImageStorage } from '../domain/image-storage.ts';
import type { SecretDeriver } from '../lib/server-secret.ts';
import type { Part } from './part.ts';

export async function storagePart(options: {
  config: Config['storage'];
  secrets: SecretDeriver;
  /** The deployment's PostgreSQL schema, if any. */
  schema: string | undefined;
}): Promise<Part<ImageStorage>> {
  // Objects this deployment writes carry a tag only it can make (server secret and
  // schema), so its orphan sweep never deletes another deployment's images in a bucket.
  const owner = options.secrets
    .derive('storage-owner', options.schema ?? '')
    .toString('hex')
    .slice(0, 32);
  const storage = await createStorage(options.config, { owner });
  return {
    gives: storage,
    ready: { name: 'storage', check: () => storage.ping() },
    close: () => storage.close(),
  };
}
