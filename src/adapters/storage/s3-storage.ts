import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { BOUNDS } from '../../domain/bounds.ts';
import { AppError } from '../../domain/errors.ts';
import type { ImageStorage, StoredImage } from '../../domain/image-storage.ts';
import {
  assertValidImageKey,
  assertValidPut,
  contentTypeForKey,
  isValidImageKey,
} from './image-keys.ts';

export interface S3Options {
  bucket: string;
  /** S3-compatible endpoint (MinIO, R2...). Omit for AWS. */
  endpoint?: string;
  region: string;
  /** Both or neither; neither uses the SDK's default credential chain (env, profile, IAM role). */
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  /** Key prefix inside the bucket (`images` or `images/` both store `images/<key>`). */
  prefix?: string;
  /** Budget for one HTTP attempt (connect, send, response headers; also the idle limit). */
  requestTimeoutMs?: number;
  /**
   * This deployment's tag, written as object metadata on every put: the orphan sweep deletes
   * only objects that carry it (`owns`). Without one, nothing is ever taken for an orphan.
   */
  owner?: string;
}

/** The object metadata that names the deployment that wrote an image. */
const OWNER_META = 'shotsmith-owner';

export const DEFAULT_S3_REQUEST_TIMEOUT_MS = BOUNDS.storage.s3RequestTimeoutMs;

const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
]);
const NETWORK_ERROR_NAMES = new Set(['TimeoutError', 'AbortError', 'RequestTimeout']);

interface ErrorInfo {
  name: string;
  code: string | undefined;
  httpStatus: number | undefined;
}

function errorInfo(err: unknown): ErrorInfo {
  if (typeof err !== 'object' || err === null) {
    return { name: 'Error', code: undefined, httpStatus: undefined };
  }
  const e = err as { name?: unknown; code?: unknown; $metadata?: { httpStatusCode?: unknown } };
  const httpStatus = e.$metadata?.httpStatusCode;
  return {
    name: typeof e.name === 'string' ? e.name : 'Error',
    code: typeof e.code === 'string' ? e.code : undefined,
    httpStatus: typeof httpStatus === 'number' ? httpStatus : undefined,
  };
}

/**
 * 503 when the backend is unreachable or failing (network errors, timeouts, 5xx, 429 throttling),
 * 500 otherwise (access denied, missing bucket, bad credentials: configuration problems).
 * The message carries only the operation, the error name and the HTTP status: never the
 * SDK message, the request, or the configuration (so no credentials).
 */
function storageError(operation: string, err: unknown): AppError {
  const { name, code, httpStatus } = errorInfo(err);
  const unavailable =
    httpStatus === undefined
      ? NETWORK_ERROR_NAMES.has(name) || (code !== undefined && NETWORK_ERROR_CODES.has(code))
      : httpStatus >= 500 || httpStatus === 429;
  const detail = [name, code !== undefined && code !== name ? code : undefined, httpStatus]
    .filter((part) => part !== undefined)
    .join(' ');
  return new AppError('storage_error', `S3 ${operation} failed (${detail}).`, {
    status: unavailable ? 503 : 500,
    cause: err,
  });
}

const isMissingObject = (err: unknown): boolean => {
  const { name, httpStatus } = errorInfo(err);
  return name === 'NoSuchKey' || (httpStatus === 404 && name !== 'NoSuchBucket');
};

function normalizePrefix(prefix: string | undefined): string {
  const trimmed = (prefix ?? '').replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? '' : `${trimmed}/`;
}

/** Reads a GetObject body, destroying the stream if the operation deadline passes first. */
async function readBody(
  body: { transformToByteArray(): Promise<Uint8Array>; destroy?: (err?: Error) => void },
  signal: AbortSignal,
): Promise<Buffer> {
  const onAbort = () =>
    body.destroy?.(Object.assign(new Error('Deadline'), { name: 'AbortError' }));
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    signal.throwIfAborted();
    const bytes = await body.transformToByteArray();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

export async function createS3Storage(options: S3Options): Promise<ImageStorage> {
  const { bucket, region, accessKeyId, secretAccessKey } = options;
  if (typeof bucket !== 'string' || bucket === '') {
    throw new AppError('storage_error', 'S3 storage needs a bucket.');
  }
  if (typeof region !== 'string' || region === '') {
    throw new AppError('storage_error', 'S3 storage needs a region.');
  }
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    throw new AppError('storage_error', 'S3 access key id and secret access key go together.');
  }
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_S3_REQUEST_TIMEOUT_MS;
  if (!Number.isFinite(requestTimeoutMs) || requestTimeoutMs <= 0) {
    throw new AppError('storage_error', 'S3 requestTimeoutMs must be a positive number.');
  }
  const { s3Attempts, s3BackoffSlackMs } = BOUNDS.storage;
  return new S3ImageStorage({
    client: new S3Client(clientConfig(options, requestTimeoutMs)),
    bucket,
    prefix: normalizePrefix(options.prefix),
    deadlineMs: requestTimeoutMs * s3Attempts + s3BackoffSlackMs,
    owner: options.owner,
  });
}

function clientConfig(options: S3Options, requestTimeoutMs: number): S3ClientConfig {
  const { endpoint, region, accessKeyId, secretAccessKey, forcePathStyle } = options;
  const { s3Attempts, s3ConnectTimeoutMs } = BOUNDS.storage;
  const config: S3ClientConfig = {
    region,
    forcePathStyle,
    maxAttempts: s3Attempts,
    requestHandler: {
      connectionTimeout: Math.min(requestTimeoutMs, s3ConnectTimeoutMs),
      requestTimeout: requestTimeoutMs,
      throwOnRequestTimeout: true,
      socketTimeout: requestTimeoutMs,
    },
  };
  if (endpoint) {
    config.endpoint = endpoint;
    // Many S3-compatible servers reject the SDK's default flexible checksum headers.
    config.requestChecksumCalculation = 'WHEN_REQUIRED';
    config.responseChecksumValidation = 'WHEN_REQUIRED';
  }
  if (accessKeyId && secretAccessKey) {
    config.credentials = { accessKeyId, secretAccessKey };
  }
  return config;
}

/** Images as objects under `prefix` in one bucket; every operation bounded by `deadlineMs`. */
class S3ImageStorage implements ImageStorage {
  readonly kind = 's3';
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  /** One operation, its retries included. */
  readonly #deadlineMs: number;
  readonly #owner: string | undefined;

  constructor(parts: {
    client: S3Client;
    bucket: string;
    prefix: string;
    deadlineMs: number;
    owner: string | undefined;
  }) {
    this.#client = parts.client;
    this.#bucket = parts.bucket;
    this.#prefix = parts.prefix;
    this.#deadlineMs = parts.deadlineMs;
    this.#owner = parts.owner;
  }

  async put(key: string, body: Buffer, meta: { contentType: string; expiresAt: Date }) {
    const Key = this.#objectKey(key);
    const contentType = assertValidPut(key, body, meta);
    try {
      await this.#client.send(
        new PutObjectCommand({
          Bucket: this.#bucket,
          Key,
          Body: body,
          ContentType: contentType,
          ContentLength: body.length,
          Expires: meta.expiresAt,
          ...(this.#owner ? { Metadata: { [OWNER_META]: this.#owner } } : {}),
        }),
        { abortSignal: this.#deadline() },
      );
    } catch (err) {
      const failure = storageError('put', err);
      // Unanswered (a timeout, a cut connection): the object may exist all the same, or
      // appear once a hung server resumes. Deleted now if it can be, without holding the
      // answer; the orphan sweep removes what this misses (sweep-orphan-images.ts).
      if (failure.status === 503) {
        this.#client
          .send(new DeleteObjectCommand({ Bucket: this.#bucket, Key }), {
            abortSignal: this.#deadline(),
          })
          .catch(() => {});
      }
      throw failure;
    }
  }

  async get(key: string): Promise<StoredImage | null> {
    const Key = this.#objectKey(key);
    const signal = this.#deadline();
    try {
      const out = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key }), {
        abortSignal: signal,
      });
      if (out.Body === undefined) {
        throw new AppError('storage_error', 'S3 get returned no body.');
      }
      const body = await readBody(out.Body, signal);
      return { body, contentType: out.ContentType ?? contentTypeForKey(key), size: body.length };
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (isMissingObject(err)) return null;
      throw storageError('get', err);
    }
  }

  async delete(key: string) {
    const Key = this.#objectKey(key);
    try {
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key }), {
        abortSignal: this.#deadline(),
      });
    } catch (err) {
      // S3 answers 204 for missing keys; some compatible servers answer 404.
      if (isMissingObject(err)) return;
      throw storageError('delete', err);
    }
  }

  async list({ olderThan, cursor, limit }: Parameters<ImageStorage['list']>[0]) {
    const prefix = this.#prefix;
    try {
      // ListObjects (v1) with a marker, the last key seen: every S3-compatible server has
      // it, and the cursor is a plain key (s3rver fails V2 pages that are truncated).
      const out = await this.#client.send(
        new ListObjectsCommand({
          Bucket: this.#bucket,
          ...(prefix ? { Prefix: prefix } : {}),
          ...(cursor ? { Marker: cursor } : {}),
          MaxKeys: limit,
        }),
        { abortSignal: this.#deadline() },
      );
      const keys: string[] = [];
      let last: string | null = null;
      for (const object of out.Contents ?? []) {
        if (object.Key === undefined) continue;
        last = object.Key;
        const key = object.Key.slice(prefix.length);
        if (!isValidImageKey(key)) continue; // not ours
        if (object.LastModified && object.LastModified < olderThan) keys.push(key);
      }
      return { keys, next: out.IsTruncated ? (out.NextMarker ?? last) : null };
    } catch (err) {
      throw storageError('list', err);
    }
  }

  async owns(key: string) {
    if (!this.#owner) return false;
    try {
      const head = await this.#client.send(
        new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#objectKey(key) }),
        { abortSignal: this.#deadline() },
      );
      return head.Metadata?.[OWNER_META] === this.#owner;
    } catch (err) {
      if (isMissingObject(err)) return false;
      throw storageError('head', err);
    }
  }

  async ping() {
    try {
      await this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }), {
        abortSignal: this.#deadline(),
      });
    } catch (err) {
      throw storageError('readiness check', err);
    }
  }

  async close() {
    this.#client.destroy();
  }

  #objectKey(key: string): string {
    assertValidImageKey(key);
    return `${this.#prefix}${key}`;
  }

  #deadline(): AbortSignal {
    return AbortSignal.timeout(this.#deadlineMs);
  }
}
