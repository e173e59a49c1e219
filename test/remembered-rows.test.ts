import assert from 'node:assert/strict';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { migrateToLatest } from '../migrations/index.ts';
import { connectDatabase, type DatabaseHandle } from '../src/adapters/db/connect.ts';
import { createKyselyStore } from '../src/adapters/db/kysely-store.ts';
import type { DirectSqlite } from '../src/adapters/db/node-sqlite.ts';
import type { NewScreenshot, Store } from '../src/domain/store.ts';
import { longDataDir, removeDataDir } from './helpers/data-dir.ts';

/**
 * What a SQLite node remembers between requests (ARCHITECTURE.md, "Hot path"): active keys
 * and each key's newest cache record, used only while the connection's version holds. The
 * version must move with every write that could change them, this connection's or another
 * process's (the operator CLI, a second process on the file), and with nothing else.
 */
describe('remembered rows [sqlite]', () => {
  let dataDir: string;
  let database: DatabaseHandle;
  let direct: DirectSqlite;
  let store: Store;
  /** A second connection on the same file: another process, as far as SQLite can tell. */
  let outside: DatabaseSync;
  const now = Date.now();
  let serial = 0;

  before(async () => {
    dataDir = await longDataDir('remembered');
    database = connectDatabase({ url: undefined, dataDir });
    await migrateToLatest(database.db as never, 'sqlite');
    direct = database.direct as DirectSqlite;
    store = createKyselyStore(database.db, 'sqlite', { direct });
    outside = new DatabaseSync(path.join(dataDir, 'shotsmith.sqlite'));
    outside.exec('PRAGMA busy_timeout = 5000');
  });
  after(async () => {
    outside?.close();
    await database?.close();
    await removeDataDir(dataDir);
  });

  async function account() {
    const n = ++serial;
    const user = await store.users.create({
      email: `remembered-${n}@example.com`,
      passwordHash: null,
      plan: 'free',
      now,
    });
    assert.notEqual(user, 'email_taken');
    if (user === 'email_taken') throw new Error('unreachable');
    const keyHash = `hash-${n}-${process.pid}`;
    const key = await store.keys.createWithinLimit({
      userId: user.id,
      name: 'k',
      prefix: 'sk_live_abcd',
      keyHash,
      signingNonce: `nonce-${n}`,
      now,
      maxActive: 10,
    });
    if (key === 'limit_reached') throw new Error('unreachable');
    return { user, key, keyHash };
  }

  const shot = (userId: number, cacheKey: string, createdAt: number, expiresAt: number) =>
    ({
      userId,
      token: `tok-${++serial}-${process.pid}`,
      ext: 'png',
      url: 'https://example.com/',
      format: 'png',
      width: 10,
      height: 10,
      viewportWidth: 10,
      viewportHeight: 10,
      fullPage: false,
      quality: 80,
      deviceScaleFactor: 1,
      truncated: false,
      warnings: [],
      listable: false,
      cacheKey,
      targetStatus: 200,
      metadata: null,
      content: null,
      createdAt,
      expiresAt,
    }) satisfies NewScreenshot;

  it('moves the version with writes that change remembered rows, and with nothing else', async () => {
    const { user, key } = await account();
    const v = direct.version();
    // Reads, and writes elsewhere or that change nothing, keep it.
    direct.all('SELECT * FROM api_keys WHERE id = ?', [key.id]);
    await store.keys.findActiveByHash('no-such-hash');
    await store.quota.reserve(
      { userId: user.id, period: '2026-11', day: '2026-11-27' },
      { limit: 100 },
    );
    direct.run('UPDATE api_keys SET name = ? WHERE id = ?', ['k', -1]);
    assert.equal(direct.version(), v, 'reads, usage writes and no-op writes keep the version');
    // This connection's own write through the store (Kysely) moves it...
    assert.equal(await store.users.setPlan(user.id, 'pro', now), true);
    const afterOwn = direct.version();
    assert.notEqual(afterOwn, v, 'a plan change on this connection');
    // ...and so does any commit by another connection, whatever the table.
    // (A write that leaves every byte as it was commits nothing: SQLite skips it.)
    outside.prepare('UPDATE usage_months SET used = used + 1 WHERE user_id = ?').run(user.id);
    assert.notEqual(direct.version(), afterOwn, 'a commit by another connection');
  });

  it('has no trigger, view or foreign key that changes remembered rows unnamed', () => {
    // The version moves with statements that name users, api_keys or screenshots. A trigger, a
    // view, or a foreign key into api_keys or screenshots (a cascade started from another
    // table) would change their rows without naming them: the schema must have none.
    const hidden = outside
      .prepare("SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view')")
      .all();
    assert.deepEqual(hidden, []);
    const tables = outside
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all() as Array<{ name: string }>;
    assert.ok(tables.length > 5, 'the schema is there');
    let intoUsers = 0;
    for (const { name } of tables) {
      const keys = outside.prepare(`PRAGMA foreign_key_list("${name}")`).all() as Array<{
        table: string;
      }>;
      for (const key of keys) {
        assert.ok(!['api_keys', 'screenshots'].includes(key.table), `${name} -> ${key.table}`);
        if (key.table === 'users') intoUsers++;
      }
    }
    assert.ok(intoUsers > 3, 'the foreign keys are read (into users: started by naming it)');
  });

  it('answers a key from memory only while nothing has changed it', async () => {
    const { user, key, keyHash } = await account();
    const first = await store.keys.findActiveByHash(keyHash);
    assert.equal(first?.user.plan, 'free');
    assert.equal(await store.keys.findActiveByHash(keyHash), first, 'the remembered answer');
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first?.user), 'shared, so frozen');

    // Another process changes the plan (the operator CLI's set-plan): seen at once.
    outside.prepare('UPDATE users SET plan = ? WHERE id = ?').run('pro', user.id);
    assert.equal((await store.keys.findActiveByHash(keyHash))?.user.plan, 'pro');
    // Another process revokes the key: gone at once.
    outside.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ?').run(now, key.id);
    assert.equal(await store.keys.findActiveByHash(keyHash), null);
  });

  it('sees a revocation on this connection at once, in the key and in the cache lookup', async () => {
    const { user, key, keyHash } = await account();
    const record = await store.screenshots.insert(shot(user.id, 'ck-revoke', now, now + 60_000));
    const found = await store.screenshots.findCachedForKey({
      cacheKey: 'ck-revoke',
      since: now - 1_000,
      now,
      keyId: key.id,
    });
    assert.deepEqual([found.record?.id, found.keyActive], [record.id, true]);
    assert.ok(await store.keys.findActiveByHash(keyHash));

    assert.equal(await store.keys.revoke(user.id, key.id, now), true);
    assert.equal(await store.keys.findActiveByHash(keyHash), null);
    const after = await store.screenshots.findCachedForKey({
      cacheKey: 'ck-revoke',
      since: now - 1_000,
      now,
      keyId: key.id,
    });
    // As the query answers: the record, and the key's state that refuses it.
    assert.deepEqual([after.record?.id, after.keyActive], [record.id, false]);
  });

  it('answers each lookup as the exact query would, whatever its window', async () => {
    const { user, key } = await account();
    const ck = 'ck-window';
    const look = (since: number, at: number) =>
      store.screenshots.findCachedForKey({ cacheKey: ck, since, now: at, keyId: key.id });
    assert.equal((await look(now - 1_000, now)).record, null, 'nothing cached yet');

    // An older record kept long, then a newer one kept briefly (a retention changed between).
    const older = await store.screenshots.insert(shot(user.id, ck, now - 5_000, now + 60_000));
    const newer = await store.screenshots.insert(shot(user.id, ck, now - 1_000, now + 1_000));
    assert.equal((await look(now - 10_000, now)).record?.id, newer.id, 'the newest fresh one');
    assert.equal((await look(now - 10_000, now)).record?.id, newer.id, 'again, remembered');
    // A window that starts after the newest record: none, although records exist.
    assert.equal((await look(now - 500, now)).record, null);
    // The newest has expired, the older has not: the older one, as the query finds it.
    assert.equal((await look(now - 10_000, now + 2_000)).record?.id, older.id);
    // A window that starts between the two, once the newest expired: none.
    assert.equal((await look(now - 2_000, now + 2_000)).record, null);

    // A newer record inserted by this connection replaces the remembered newest.
    const newest = await store.screenshots.insert(shot(user.id, ck, now, now + 60_000));
    assert.equal((await look(now - 10_000, now)).record?.id, newest.id);
    // Deleted from outside (another node's sweep, the CLI): not answered any more.
    outside.prepare('DELETE FROM screenshots WHERE id = ?').run(newest.id);
    assert.equal((await look(now - 10_000, now)).record?.id, newer.id);
  });
});
