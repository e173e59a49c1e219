import assert from 'node:assert/strict';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { createKey, signUp, type TestApp } from './app.ts';
import type { Cluster } from './cluster.ts';

/**
 * The one way a test gets an account: signed up through the API, moved to a plan, and with
 * `key: true` given an API key through the API. `signUp` and `createKey` (app.ts) stay for
 * the tests of signing up and of keys themselves, and for a second key of an account.
 */

export type TestPlan = 'free' | 'pro';

export interface AccountOptions {
  /** Default 'free', the plan signing up gives. */
  plan?: TestPlan;
  /** Also create an API key (default false: the session only). */
  key?: boolean;
}

export interface Account {
  /** The user's id. */
  id: number;
  email: string;
  /** `session=...`, for the Cookie header of dashboard requests. */
  cookie: string;
}

export interface KeyedAccount extends Account {
  /** The key's plaintext, for `x-api-key`. */
  key: string;
  keyId: number;
  signingSecret: string;
}

/**
 * An account on an in-process app. Pro is set through the app's own store, as the admin CLI
 * does (`set-plan`): there is no route that grants a plan without billing.
 */
export function account(t: TestApp, options: AccountOptions & { key: true }): Promise<KeyedAccount>;
export function account(t: TestApp, options?: AccountOptions): Promise<Account>;
export function account(t: TestApp, options: AccountOptions = {}): Promise<Account> {
  const { ctx } = t.deps;
  return make(t, options, (id, plan) => ctx.store.users.setPlan(id, plan, ctx.clock()));
}

/** Just the API key of a new account, for a test that needs nothing else of it. */
export async function newApiKey(
  t: TestApp,
  options: Pick<AccountOptions, 'plan'> = {},
): Promise<string> {
  return (await account(t, { ...options, key: true })).key;
}

export interface NodeAccountOptions extends AccountOptions {
  /** Where a Pro plan is written, straight into the cluster's database; needed for 'pro'. */
  cluster?: Pick<Cluster, 'sql'>;
}

/** An account through a node process (its own process, or one of a cluster). */
export function nodeAccount(
  node: Pick<TestApp, 'fetch'>,
  options: NodeAccountOptions & { key: true },
): Promise<KeyedAccount>;
export function nodeAccount(
  node: Pick<TestApp, 'fetch'>,
  options?: NodeAccountOptions,
): Promise<Account>;
export function nodeAccount(
  node: Pick<TestApp, 'fetch'>,
  { cluster, ...options }: NodeAccountOptions = {},
): Promise<Account> {
  return make(node, options, async (id, plan) => {
    if (!cluster) throw new Error(`a ${plan} account through a node needs its cluster`);
    await cluster.sql('UPDATE users SET plan = $1 WHERE id = $2', [plan, id]);
  });
}

async function make(
  service: Pick<TestApp, 'fetch'>,
  { plan = 'free', key = false }: AccountOptions,
  setPlan: (id: number, plan: TestPlan) => Promise<unknown>,
): Promise<Account | KeyedAccount> {
  const user = await signUp(service);
  if (plan !== 'free') await setPlan(user.id, plan);
  if (!key) return user;
  const made = await createKey(service, user.cookie);
  return { ...user, key: made.key, keyId: made.id, signingSecret: made.signing_secret };
}

/**
 * Revokes a key in an app's SQLite file from another connection, with no event published (a
 * revocation whose event was lost): only the pipeline's own reads of the key can see it.
 */
export function revokeSilently(t: Pick<TestApp, 'dataDir'>, keyId: number): void {
  const db = new DatabaseSync(path.join(t.dataDir, 'shotsmith.sqlite'));
  try {
    db.exec('PRAGMA busy_timeout = 5000');
    const done = db
      .prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
      .run(Date.now(), keyId);
    assert.equal(Number(done.changes), 1);
  } finally {
    db.close();
  }
}
