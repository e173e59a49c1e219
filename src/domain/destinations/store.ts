/**
 * The storage destinations' port on the database (docs/destinations.md): an account's own
 * buckets, the secret sealed. Beside the destinations' domain; ../store.ts composes it.
 */

/** A destination as stored: everything but the secret in the clear. */
export interface StorageDestination {
  seq: number;
  /** `dst_` and 24 base62 characters. */
  id: string;
  userId: number;
  name: string;
  /** null: AWS S3 (the region's endpoint). */
  endpoint: string | null;
  region: string;
  bucket: string;
  /** Without leading or trailing slashes; '' for none. */
  prefix: string;
  accessKeyId: string;
  /** The secret access key, sealed (lib/crypto.ts seal, the id as associated data). */
  secretSealed: string;
  pathStyle: boolean;
  acl: 'private' | 'public-read';
  createdAt: number;
  testedAt: number;
}

export type NewStorageDestination = Omit<StorageDestination, 'seq'>;

export interface DestinationStore {
  /** Saved unless the account has `max` already: then 'limit_reached', nothing saved. */
  createWithinLimit(
    destination: NewStorageDestination,
    max: number,
  ): Promise<StorageDestination | 'limit_reached'>;
  /** The account's, oldest first. */
  list(userId: number): Promise<StorageDestination[]>;
  /** The account's destination of that id, else null (another account's too). */
  get(userId: number, id: string): Promise<StorageDestination | null>;
  /** Whether one was deleted. */
  delete(userId: number, id: string): Promise<boolean>;
  markTested(userId: number, id: string, at: number): Promise<void>;
}
