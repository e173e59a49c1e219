import {
  CONTENT_FILES,
  CONTENT_KINDS,
  FORMATS,
  IMAGE_FORMATS,
} from '../../domain/captures/formats.ts';
import { AppError } from '../../domain/errors.ts';

/** Image keys and the checks both storage backends share (the port is domain/image-storage.ts). */

/**
 * A key's extension and its Content-Type: each format's file extension (`jpg`) and, as keys
 * have always allowed, the format's own name (`jpeg`); and the page's content files stored
 * beside an image (`html`, `txt`, `md`, UTF-8 text).
 */
const CONTENT_TYPES = new Map<string, string>([
  ...IMAGE_FORMATS.flatMap((name) => {
    const { ext, contentType } = FORMATS[name];
    return [
      [name, contentType],
      [ext, contentType],
    ] as const;
  }),
  ...CONTENT_KINDS.map(
    (kind) => [CONTENT_FILES[kind].ext, CONTENT_FILES[kind].contentType] as const,
  ),
]);

const IMAGE_KEY = new RegExp(`^[A-Za-z0-9_-]{16,128}\\.(${[...CONTENT_TYPES.keys()].join('|')})$`);

/**
 * Keys come from URLs: a token of 16-128 URL-safe characters and an image extension, nothing
 * else. No dots, slashes or backslashes in the token, so a key never names a path outside the
 * storage root.
 */
export function isValidImageKey(key: string): boolean {
  return typeof key === 'string' && IMAGE_KEY.test(key);
}

/** Throws AppError('invalid_request') unless `key` is a valid image key. */
export function assertValidImageKey(key: string): void {
  if (!isValidImageKey(key)) {
    throw new AppError('invalid_request', 'Invalid image key.');
  }
}

/** The Content-Type implied by a valid key's extension (`image/png`, `image/jpeg`, `image/webp`). */
export function contentTypeForKey(key: string): string {
  assertValidImageKey(key);
  const ext = key.slice(key.lastIndexOf('.') + 1);
  const type = CONTENT_TYPES.get(ext);
  if (type === undefined) {
    throw new AppError('invalid_request', 'Invalid image key.');
  }
  return type;
}

/**
 * Validates the arguments of `put` and returns the canonical content type to store. The key is
 * checked first (invalid_request); a non-Buffer body or a content type that does not match the
 * key's extension is a caller bug (internal_error). Both backends therefore return the same
 * Content-Type for the same key.
 */
export function assertValidPut(
  key: string,
  body: Buffer,
  meta: { contentType: string; expiresAt: Date },
): string {
  const expected = contentTypeForKey(key);
  if (!Buffer.isBuffer(body)) {
    throw new AppError('internal_error', 'Image body must be a Buffer.');
  }
  const given = meta?.contentType?.split(';')[0]?.trim().toLowerCase();
  if (given !== expected.split(';')[0]) {
    throw new AppError(
      'internal_error',
      `Content type does not match the image key extension (expected ${expected}).`,
    );
  }
  if (!(meta.expiresAt instanceof Date) || Number.isNaN(meta.expiresAt.getTime())) {
    throw new AppError('internal_error', 'Image expiresAt must be a valid Date.');
  }
  return expected;
}
