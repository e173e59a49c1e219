/**
 * The customer's bucket for the clients' and the dashboard's tests of storage destinations
 * (docs/destinations.md): s3rver in a process of its own (test/helpers/s3rver-process.ts) on
 * loopback, which the service reaches because EGRESS_ALLOWLIST names `hostPort`, and an S3
 * client of the test's own that reads back what the service wrote there.
 */
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { type S3Process, startS3Process } from '../helpers/s3rver-process.ts';

/** s3rver checks the access key id only; its one account's key and secret are both this. */
export const S3RVER_CREDENTIAL = 'S3RVER';
export const S3RVER_REGION = 'us-east-1';

export interface TestBucket {
  s3: S3Process;
  /** `127.0.0.1:port`, for EGRESS_ALLOWLIST. */
  hostPort: string;
  /** The fields of POST /v1/storage-destinations for this bucket, with `extra` over them. */
  destination(extra?: Record<string, unknown>): {
    name: string;
    endpoint: string;
    region: string;
    bucket: string;
    access_key_id: string;
    secret_access_key: string;
    [field: string]: unknown;
  };
  /** An object's bytes and content type. */
  object(key: string): Promise<{ bytes: Buffer; type: string | undefined }>;
  /** The keys under `prefix`. */
  keys(prefix: string): Promise<string[]>;
  /** A second, empty bucket, and a way to remove it (a destination on it then fails). */
  spareBucket(name: string): Promise<{ name: string; remove(): Promise<void> }>;
  close(): Promise<void>;
}

export async function startBucket(): Promise<TestBucket> {
  const s3 = await startS3Process();
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: S3RVER_REGION,
    forcePathStyle: true,
    credentials: { accessKeyId: S3RVER_CREDENTIAL, secretAccessKey: S3RVER_CREDENTIAL },
  });
  return {
    s3,
    hostPort: new URL(s3.endpoint).host,
    destination: (extra = {}) => ({
      name: 'my bucket',
      endpoint: s3.endpoint,
      region: S3RVER_REGION,
      bucket: s3.bucket,
      access_key_id: S3RVER_CREDENTIAL,
      secret_access_key: S3RVER_CREDENTIAL,
      ...extra,
    }),
    async object(key) {
      const out = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
      return {
        type: out.ContentType,
        bytes: Buffer.from((await out.Body?.transformToByteArray()) ?? []),
      };
    },
    async keys(prefix) {
      const listed = await client.send(
        new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }),
      );
      return (listed.Contents ?? []).flatMap((o) => (o.Key === undefined ? [] : [o.Key]));
    },
    async spareBucket(name) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
      return {
        name,
        remove: async () => {
          await client.send(new DeleteBucketCommand({ Bucket: name }));
        },
      };
    },
    async close() {
      client.destroy();
      await s3.close();
    },
  };
}
