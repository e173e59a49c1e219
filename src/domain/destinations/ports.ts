/**
 * What the destinations' use cases ask of the outside world: a writer into a customer's
 * S3-compatible bucket (adapters/destinations/). The endpoint is judged and the connection
 * pinned by the egress rules there.
 */

/** A bucket as the writer reaches it: the destination with its secret opened. */
export interface BucketTarget {
  /** null: AWS S3, the region's endpoint. */
  endpoint: string | null;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  pathStyle: boolean;
  acl: 'private' | 'public-read';
}

export interface PutObject {
  /** The whole key in the bucket (the prefix included). */
  key: string;
  body: Buffer;
  contentType: string;
}

export interface WrittenObject {
  /** The object's ETag as the store answered it, quotes removed; null: none answered. */
  etag: string | null;
  /** `https://endpoint/bucket/key` (path style) or `https://bucket.endpoint/key`. */
  location: string;
}

export interface DestinationWriter {
  /**
   * The endpoint's screen without DNS (scheme, literal addresses, port): AppError
   * url_not_allowed naming `endpoint`, before any connection.
   */
  screen(target: Pick<BucketTarget, 'endpoint' | 'region'>): void;
  /**
   * Writes `key` (a few bytes) and deletes it again. AppError storage_test_failed naming the
   * provider's code (AccessDenied, NoSuchBucket, SignatureDoesNotMatch, ...), or
   * url_not_allowed for an endpoint the egress rules refuse.
   */
  test(target: BucketTarget, key: string): Promise<void>;
  /** AppError storage_destination_error naming the provider's code. */
  put(target: BucketTarget, object: PutObject): Promise<WrittenObject>;
}
