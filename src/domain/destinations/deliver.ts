/**
 * A capture written into the account's own bucket (docs/destinations.md): its image (or PDF)
 * and its content files beside it, at the request's path template under the destination's
 * prefix. A failed upload is the capture's failure (502 storage_destination_error); the
 * caller gives the unit back and leaves nothing hosted for it.
 */
import { createHash } from 'node:crypto';
import { CONTENT_FILES, contentTypeForExt, storedKeys } from '../captures/formats.ts';
import type { StorageRequest } from '../captures/options/define.ts';
import type { CaptureContext } from '../captures/ports.ts';
import { AppError } from '../errors.ts';
import type { ScreenshotRecord } from '../store.ts';
import { bucketOf, isDestinationId, withPrefix } from './manage-destinations.ts';
import type { StorageDestination } from './store.ts';

/** What the answer and the webhook say of the copy (`storage`). */
export interface Delivered {
  destination: string;
  bucket: string;
  key: string;
  location: string;
  etag: string | null;
}

/**
 * The request's destination, the caller's own: a 400 naming it otherwise (another account's
 * is not found either), before any unit is taken.
 */
export async function destinationFor(
  ctx: Pick<CaptureContext, 'store'>,
  userId: number | null,
  request: StorageRequest,
): Promise<StorageDestination> {
  const found =
    userId !== null && isDestinationId(request.destination)
      ? await ctx.store.destinations.get(userId, request.destination)
      : null;
  if (found === null) {
    throw new AppError(
      'invalid_request',
      `storage.destination ${request.destination.slice(0, 40)} is not one of this account's storage destinations`,
    );
  }
  return found;
}

/** The object's path: the template with its fields filled (docs/destinations.md). */
export function objectPath(
  template: string,
  fields: { id: string; hash: string; ext: string; at: number; host: string },
): string {
  const date = new Date(fields.at);
  const two = (n: number) => String(n).padStart(2, '0');
  const values: Record<string, string> = {
    id: fields.id,
    hash: fields.hash,
    ext: fields.ext,
    year: String(date.getUTCFullYear()),
    month: two(date.getUTCMonth() + 1),
    day: two(date.getUTCDate()),
    host: fields.host.replace(/[^A-Za-z0-9.-]/g, '_') || 'document',
  };
  return template.replace(/\{([a-z]+)\}/g, (_, name: string) => values[name] ?? '');
}

/** Writes the record's files into the destination; the image's key is the answer's. */
export async function deliver(
  ctx: Pick<CaptureContext, 'storage' | 'secrets' | 'destinationWriter'>,
  parts: {
    destination: StorageDestination;
    request: StorageRequest;
    record: ScreenshotRecord;
    /** The image's bytes when this request rendered them; read back from storage otherwise. */
    image: Buffer | null;
  },
): Promise<Delivered> {
  const { destination, request, record } = parts;
  const image = parts.image ?? (await ctx.storage.get(storedKeys(record)[0] ?? ''))?.body;
  if (!image) {
    throw new AppError('storage_destination_error', 'the capture to upload is gone (expired)');
  }
  const target = bucketOf(ctx, destination);
  let host = 'document';
  try {
    host = new URL(record.url).hostname || host;
  } catch {
    // A document capture's address is its own; 'document' names it.
  }
  const path = objectPath(request.path, {
    id: record.token,
    hash: createHash('sha256').update(image).digest('hex').slice(0, 32),
    ext: record.ext,
    at: record.createdAt,
    host,
  });
  const key = withPrefix(destination.prefix, path);
  const written = await ctx.destinationWriter.put(target, {
    key,
    body: image,
    contentType: contentTypeForExt(record.ext) ?? 'application/octet-stream',
  });
  // Content files beside the image: the same key with their own extension.
  const stem = key.endsWith(`.${record.ext}`) ? key.slice(0, -record.ext.length - 1) : key;
  for (const kind of record.content?.kinds ?? []) {
    const file = CONTENT_FILES[kind];
    const body = (await ctx.storage.get(`${record.token}.${file.ext}`))?.body;
    if (body) {
      await ctx.destinationWriter.put(target, {
        key: `${stem}.${file.ext}`,
        body,
        contentType: file.contentType,
      });
    }
  }
  return {
    destination: destination.id,
    bucket: destination.bucket,
    key,
    location: written.location,
    etag: written.etag,
  };
}
