/**
 * Writing into a customer's S3-compatible bucket (docs/destinations.md), behind the domain's
 * DestinationWriter port. Its endpoint is judged by the egress rules like a capture's target:
 * https, a public address, unless EGRESS_ALLOWLIST names its host:port (an on-site MinIO may
 * then be private and plain http). Every connection's name is resolved through the egress
 * policy and the socket goes to the checked address (no DNS rebinding), whatever name the
 * SDK builds (`bucket.s3.region.amazonaws.com` in virtual-hosted style).
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  DeleteObjectCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import type {
  BucketTarget,
  DestinationWriter,
  PutObject,
  WrittenObject,
} from '../../domain/destinations/ports.ts';
import { AppError, isAppError } from '../../domain/errors.ts';
import { checkDestination, type EgressPolicy, screenDestination } from '../egress/policy.ts';

/** One attempt's budget (connect, send, headers), and the connect's own. */
const REQUEST_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 5_000;
/** What the connection test's object holds. */
const TEST_BODY = 'shotsmith connection test\n';

/** The endpoint as the SDK is given it, and the port every connection goes to. */
function endpointOf(target: Pick<BucketTarget, 'endpoint' | 'region'>): URL {
  if (target.endpoint === null) return new URL(`https://s3.${target.region}.amazonaws.com`);
  let url: URL;
  try {
    url = new URL(target.endpoint);
  } catch {
    throw new AppError('invalid_request', 'endpoint must be an absolute https URL');
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new AppError('invalid_request', 'endpoint must be scheme://host[:port], nothing more');
  }
  return url;
}

const portOf = (url: URL): number =>
  url.port === '' ? (url.protocol === 'http:' ? 80 : 443) : Number(url.port);

/** A refusal by the egress rules, named after the endpoint. */
const refused = (err: unknown): AppError =>
  new AppError(
    'url_not_allowed',
    isAppError(err) ? err.message.replace(/^url /, 'endpoint ') : 'endpoint is not allowed',
  );

/**
 * The name lookup of every connection to the endpoint: through the egress policy, so a name
 * that resolves to a private address is refused and the socket goes to the checked one.
 */
function pinnedLookup(policy: EgressPolicy, port: number): LookupFunction {
  return (hostname, options, callback) => {
    checkDestination(policy, hostname, port).then(
      (dest) => {
        if (options.all) callback(null, [{ address: dest.address, family: dest.family }]);
        else callback(null, dest.address, dest.family);
      },
      (err: unknown) => {
        const failure = Object.assign(new Error(refused(err).message), {
          code: 'EGRESS_REFUSED',
          refusal: err,
        });
        callback(failure, '', 0);
      },
    );
  };
}

export function createS3DestinationWriter(policy: EgressPolicy): DestinationWriter {
  const screen = (target: Pick<BucketTarget, 'endpoint' | 'region'>): URL => {
    if (!/^[a-z0-9-]{2,32}$/.test(target.region)) {
      throw new AppError(
        'invalid_request',
        'region must be a region name such as eu-west-1 or auto',
      );
    }
    const url = endpointOf(target);
    const port = portOf(url);
    const key = `${url.hostname.replace(/^\[|\]$/g, '').toLowerCase()}:${port}`;
    const listed =
      policy.allowlist.has(key) || policy.allowlist.has(`[${key.split(':')[0]}]:${port}`);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && listed)) {
      throw new AppError(
        'url_not_allowed',
        'endpoint must be https (http only for a host:port EGRESS_ALLOWLIST names)',
      );
    }
    try {
      screenDestination(policy, url.hostname, port);
    } catch (err) {
      throw refused(err);
    }
    return url;
  };

  const client = (target: BucketTarget, attempts: number): S3Client => {
    const url = screen(target);
    const lookup = pinnedLookup(policy, portOf(url));
    const config: S3ClientConfig = {
      region: target.region,
      forcePathStyle: target.pathStyle,
      maxAttempts: attempts,
      credentials: { accessKeyId: target.accessKeyId, secretAccessKey: target.secretAccessKey },
      requestHandler: {
        connectionTimeout: CONNECT_TIMEOUT_MS,
        requestTimeout: REQUEST_TIMEOUT_MS,
        throwOnRequestTimeout: true,
        httpAgent: new HttpAgent({ lookup }),
        httpsAgent: new HttpsAgent({ lookup }),
      },
    };
    if (target.endpoint !== null) {
      config.endpoint = target.endpoint;
      // Many S3-compatible servers reject the SDK's default flexible checksum headers.
      config.requestChecksumCalculation = 'WHEN_REQUIRED';
      config.responseChecksumValidation = 'WHEN_REQUIRED';
    }
    return new S3Client(config);
  };

  return {
    screen: (target) => {
      screen(target);
    },
    async test(target, key) {
      const s3 = client(target, 1);
      try {
        await s3.send(
          new PutObjectCommand({
            Bucket: target.bucket,
            Key: key,
            Body: TEST_BODY,
            ContentType: 'text/plain; charset=utf-8',
          }),
        );
        await s3.send(new DeleteObjectCommand({ Bucket: target.bucket, Key: key }));
      } catch (err) {
        throw failure(err, 'storage_test_failed', 'the test write into the bucket failed');
      } finally {
        s3.destroy();
      }
    },
    async put(target, object: PutObject): Promise<WrittenObject> {
      const s3 = client(target, 2);
      try {
        const answer = await s3.send(
          new PutObjectCommand({
            Bucket: target.bucket,
            Key: object.key,
            Body: object.body,
            ContentType: object.contentType,
            ...(target.acl === 'public-read' ? { ACL: 'public-read' as const } : {}),
          }),
        );
        return {
          etag: answer.ETag?.replace(/"/g, '') ?? null,
          location: locationOf(target, object.key),
        };
      } catch (err) {
        throw failure(err, 'storage_destination_error', 'the upload into your bucket failed');
      } finally {
        s3.destroy();
      }
    },
  };
}

/** Where an object is, as a URL (it may not be public: `acl` decides). */
function locationOf(target: BucketTarget, key: string): string {
  const url = endpointOf(target);
  const path = key.split('/').map(encodeURIComponent).join('/');
  if (target.pathStyle) return `${url.origin}/${target.bucket}/${path}`;
  return `${url.protocol}//${target.bucket}.${url.host}/${path}`;
}

/**
 * The SDK's failure as the answer: the egress rules' refusal as url_not_allowed naming the
 * endpoint, else `code` naming the provider's error code (AccessDenied, NoSuchBucket,
 * SignatureDoesNotMatch...) or the network's. Never the credentials.
 */
function failure(
  err: unknown,
  code: 'storage_test_failed' | 'storage_destination_error',
  what: string,
): AppError {
  const e = err as {
    name?: unknown;
    code?: unknown;
    Code?: unknown;
    $metadata?: { httpStatusCode?: unknown };
    cause?: unknown;
  };
  const egress = [e, e.cause].find(
    (x) => (x as { code?: unknown } | undefined)?.code === 'EGRESS_REFUSED',
  );
  if (egress !== undefined) return refused((egress as { refusal?: unknown }).refusal);
  const provider =
    typeof e.Code === 'string'
      ? e.Code
      : typeof e.code === 'string'
        ? e.code
        : typeof e.name === 'string' && e.name !== 'Error'
          ? e.name
          : 'UnknownError';
  const status =
    typeof e.$metadata?.httpStatusCode === 'number' ? ` (HTTP ${e.$metadata.httpStatusCode})` : '';
  return new AppError(code, `${what}: ${provider.slice(0, 64)}${status}`, {
    body: { provider_code: provider.slice(0, 64) },
  });
}
