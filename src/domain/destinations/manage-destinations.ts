/**
 * Storage destinations (docs/destinations.md): an account's own S3-compatible buckets that
 * captures are written into. A destination is saved only after a test write into it
 * succeeded; its secret is sealed at rest and never answered again.
 */
import { randomBase62, seal, unseal } from '../../lib/crypto.ts';
import type { SecretDeriver } from '../../lib/server-secret.ts';
import type { Clock } from '../../lib/time.ts';
import { AppError } from '../errors.ts';
import type { Plan } from '../plans.ts';
import type { Store, User } from '../store.ts';
import type { BucketTarget, DestinationWriter } from './ports.ts';
import type { StorageDestination } from './store.ts';

export interface DestinationContext {
  store: Store;
  clock: Clock;
  secrets: SecretDeriver;
  writer: DestinationWriter;
}

/** What POST /v1/storage-destinations takes (after schema validation). */
export interface DestinationInput {
  name: string;
  endpoint?: string;
  region: string;
  bucket: string;
  prefix?: string;
  access_key_id: string;
  secret_access_key: string;
  path_style?: boolean;
  acl?: 'private' | 'public-read';
}

/** What is answered of a destination: never its secret, nor its access key id. */
export interface DestinationAnswer {
  id: string;
  name: string;
  endpoint: string | null;
  region: string;
  bucket: string;
  prefix: string;
  path_style: boolean;
  acl: 'private' | 'public-read';
  created_at: string;
  tested_at: string;
}

const PURPOSE = 'storage-destination';

export const newDestinationId = (): string => `dst_${randomBase62(24)}`;
export const isDestinationId = (id: string): boolean => /^dst_[0-9A-Za-z]{24}$/.test(id);

export function destinationAnswer(d: StorageDestination): DestinationAnswer {
  return {
    id: d.id,
    name: d.name,
    endpoint: d.endpoint,
    region: d.region,
    bucket: d.bucket,
    prefix: d.prefix,
    path_style: d.pathStyle,
    acl: d.acl,
    created_at: new Date(d.createdAt).toISOString(),
    tested_at: new Date(d.testedAt).toISOString(),
  };
}

/** A prefix without leading or trailing slashes, empty path segments refused. */
export function normalizePrefix(raw: string | undefined): string {
  const prefix = (raw ?? '').replace(/^\/+|\/+$/g, '');
  if (
    prefix.split('/').some((part) => part === '' || part === '.' || part === '..') &&
    prefix !== ''
  ) {
    throw new AppError(
      'invalid_request',
      'prefix must be path segments without empty, "." or ".." parts',
    );
  }
  return prefix;
}

/** `<prefix>/<path>`, or `<path>` without a prefix. */
export const withPrefix = (prefix: string, path: string): string =>
  prefix === '' ? path : `${prefix}/${path}`;

/** The bucket a destination names, its secret opened (internal_error if it does not open). */
export function bucketOf(
  ctx: Pick<DestinationContext, 'secrets'>,
  d: StorageDestination,
): BucketTarget {
  const secret = unseal(ctx.secrets.derive(PURPOSE), d.secretSealed, d.id);
  if (secret === null) {
    throw new AppError(
      'storage_destination_error',
      `storage destination ${d.id} cannot be opened (the server secret changed): add it again`,
    );
  }
  return {
    endpoint: d.endpoint,
    region: d.region,
    bucket: d.bucket,
    accessKeyId: d.accessKeyId,
    secretAccessKey: secret,
    pathStyle: d.pathStyle,
    acl: d.acl,
  };
}

/** The key the connection test writes and deletes. */
const testKey = (prefix: string): string =>
  withPrefix(prefix, `.shotsmith/connection-test-${randomBase62(16)}`);

export async function createDestination(
  ctx: DestinationContext,
  caller: { user: User; plan: Readonly<Plan> },
  input: DestinationInput,
): Promise<DestinationAnswer> {
  const { user, plan } = caller;
  if (plan.storage_destinations === 0) {
    throw new AppError(
      'plan_restriction',
      `storage destinations are not available on the ${plan.name} plan`,
    );
  }
  const prefix = normalizePrefix(input.prefix);
  const target: BucketTarget = {
    endpoint: input.endpoint ?? null,
    region: input.region,
    bucket: input.bucket,
    accessKeyId: input.access_key_id,
    secretAccessKey: input.secret_access_key,
    // A custom endpoint (MinIO, most S3-compatible stores) is path-style by default.
    pathStyle: input.path_style ?? input.endpoint !== undefined,
    acl: input.acl ?? 'private',
  };
  ctx.writer.screen(target);
  // Before anything is saved: a write the bucket refuses is the caller's answer now.
  await ctx.writer.test(target, testKey(prefix));
  const id = newDestinationId();
  const now = ctx.clock();
  const created = await ctx.store.destinations.createWithinLimit(
    {
      id,
      userId: user.id,
      name: input.name,
      endpoint: target.endpoint,
      region: target.region,
      bucket: target.bucket,
      prefix,
      accessKeyId: target.accessKeyId,
      secretSealed: seal(ctx.secrets.derive(PURPOSE), target.secretAccessKey, id),
      pathStyle: target.pathStyle,
      acl: target.acl,
      createdAt: now,
      testedAt: now,
    },
    plan.storage_destinations,
  );
  if (created === 'limit_reached') {
    throw new AppError(
      'plan_restriction',
      `the ${plan.name} plan has at most ${plan.storage_destinations} storage destinations (storage_destinations); delete one first`,
    );
  }
  return destinationAnswer(created);
}

/** The account's destination, or 404 (another account's is not found either). */
export async function findDestination(
  ctx: Pick<DestinationContext, 'store'>,
  user: User,
  id: string,
): Promise<StorageDestination> {
  const found = isDestinationId(id) ? await ctx.store.destinations.get(user.id, id) : null;
  if (found === null) throw new AppError('not_found', 'storage destination not found');
  return found;
}

/** POST /v1/storage-destinations/{id}/test: the same test write, now. */
export async function testDestination(
  ctx: DestinationContext,
  user: User,
  id: string,
): Promise<DestinationAnswer> {
  const found = await findDestination(ctx, user, id);
  await ctx.writer.test(bucketOf(ctx, found), testKey(found.prefix));
  const at = ctx.clock();
  await ctx.store.destinations.markTested(user.id, id, at);
  return destinationAnswer({ ...found, testedAt: at });
}

export async function deleteDestination(
  ctx: Pick<DestinationContext, 'store'>,
  user: User,
  id: string,
): Promise<void> {
  const deleted = isDestinationId(id) && (await ctx.store.destinations.delete(user.id, id));
  if (!deleted) throw new AppError('not_found', 'storage destination not found');
}
