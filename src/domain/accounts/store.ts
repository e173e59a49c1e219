import type { PlanName } from '../plans.ts';

/**
 * Accounts, their sessions and API keys, as the domain needs them from the database. A port of
 * the domain (the Kysely adapters in adapters/db serve SQLite and PostgreSQL); ../store.ts
 * composes the ports into the Store and re-exports their types.
 */
export interface User {
  id: number;
  email: string;
  plan: PlanName;
  createdAt: number;
}

export interface ApiKeyRecord {
  id: number;
  userId: number;
  name: string;
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
}

export interface UserStore {
  /** 'email_taken' when another account has the (normalised) email. */
  create(input: {
    email: string;
    passwordHash: string | null;
    plan: PlanName;
    now: number;
  }): Promise<User | 'email_taken'>;
  findByEmail(email: string): Promise<{ user: User; passwordHash: string | null } | null>;
  findById(id: number): Promise<User | null>;
  setPlan(id: number, plan: PlanName, now: number): Promise<boolean>;
  /** The account's webhook nonce, made now (first come wins) if it has none. */
  webhookNonce(id: number, fresh: string): Promise<string>;
  /** Replaces the account's webhook nonce (a rotated webhook secret). */
  setWebhookNonce(id: number, nonce: string): Promise<void>;
}

export interface SessionStore {
  create(input: { idHash: string; userId: number; now: number; expiresAt: number }): Promise<void>;
  /** The session's user, or null when the session is unknown or expired. */
  findUser(idHash: string, now: number): Promise<User | null>;
  delete(idHash: string): Promise<void>;
  deleteExpired(now: number): Promise<number>;
}

export interface KeyStore {
  /** Inserts unless the account already has `maxActive` unrevoked keys. */
  createWithinLimit(input: {
    userId: number;
    name: string;
    prefix: string;
    keyHash: string;
    /** Derives the key's signing secret with the server secret (keys/signing-secret.ts). */
    signingNonce: string;
    now: number;
    maxActive: number;
  }): Promise<ApiKeyRecord | 'limit_reached'>;
  listActive(userId: number): Promise<ApiKeyRecord[]>;
  /** true when an active key of this account was revoked now. */
  revoke(userId: number, keyId: number, now: number): Promise<boolean>;
  findActiveByHash(
    keyHash: string,
  ): Promise<{ key: ApiKeyRecord; keyHash: string; user: User } | null>;
  /** An unrevoked key by id, for signed links: its account and signing nonce (null: none). */
  findActiveById(
    keyId: number,
  ): Promise<{ key: ApiKeyRecord; signingNonce: string | null; user: User } | null>;
  /** Replaces an active key's signing nonce; false when the account has no such key. */
  setSigningNonce(userId: number, keyId: number, nonce: string): Promise<boolean>;
  isActive(keyId: number): Promise<boolean>;
  /** Sets last_used_at unless it was written less than `minIntervalMs` ago. */
  touch(keyId: number, now: number, minIntervalMs: number): Promise<void>;
}
