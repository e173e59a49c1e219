import { sql } from 'kysely';
import { PASSWORD, sessionCookie, type TestApp } from '../helpers/app.ts';

/** A clock the test moves by hand. */
export function manualClock(start: number): { now: () => number; advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    advance(ms) {
      now += ms;
    },
  };
}

export interface Subscription {
  plan: string;
  status: string;
  renews_at: string | null;
  cancel_at_period_end: boolean;
}

export async function subscription(t: TestApp, cookie: string): Promise<Subscription> {
  const res = await t.fetch('/v1/billing/subscription', { cookie });
  if (res.status !== 200) throw new Error(`subscription: ${res.status} ${await res.text()}`);
  return (await res.json()) as Subscription;
}

/** A fresh session for an existing account (a month of test time outlives the first). */
export async function logIn(t: TestApp, email: string): Promise<string> {
  const res = await t.fetch('/v1/auth/login', {
    method: 'POST',
    json: { email, password: PASSWORD },
  });
  if (res.status !== 200) throw new Error(`login: ${res.status} ${await res.text()}`);
  return sessionCookie(res);
}

/** POST /v1/billing/checkout, expecting 200: the checkout URL. */
export async function startCheckout(t: TestApp, cookie: string): Promise<string> {
  const res = await t.fetch('/v1/billing/checkout', { method: 'POST', cookie });
  if (res.status !== 200) throw new Error(`checkout: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { url: string }).url;
}

/** Event ids recorded for an account, straight from the database. */
export async function recordedEvents(t: TestApp, userId: number): Promise<string[]> {
  const rows = await t.deps.database.db
    .selectFrom('billing_events')
    .select('id')
    .where('user_id', '=', userId)
    .execute();
  return rows.map((r) => r.id);
}

export async function countEvents(t: TestApp, id: string): Promise<number> {
  const rows = await t.deps.database.db
    .selectFrom('billing_events')
    .select('id')
    .where('id', '=', id)
    .execute();
  return rows.length;
}

/**
 * Makes the next write of plan 'pro' to this account fail inside the database: a real
 * failure in the middle of applying an event, on either dialect.
 */
export async function failProUpgrades(t: TestApp, userId: number): Promise<() => Promise<void>> {
  const db = t.deps.database.db;
  if (t.deps.database.dialect === 'sqlite') {
    await sql
      .raw(
        `CREATE TRIGGER fail_pro BEFORE UPDATE OF plan ON users WHEN NEW.plan = 'pro' AND NEW.id = ${userId} ` +
          `BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
      )
      .execute(db);
    return async () => {
      await sql.raw('DROP TRIGGER fail_pro').execute(db);
    };
  }
  await sql
    .raw(
      `CREATE FUNCTION fail_pro() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER fail_pro BEFORE UPDATE ON users FOR EACH ROW ` +
        `WHEN (NEW.plan = 'pro' AND NEW.id = ${userId}) EXECUTE FUNCTION fail_pro()`,
    )
    .execute(db);
  return async () => {
    await sql.raw('DROP TRIGGER fail_pro ON users').execute(db);
    await sql.raw('DROP FUNCTION fail_pro()').execute(db);
  };
}
