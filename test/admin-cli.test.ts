import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { account } from './helpers/accounts.ts';
import { startApp } from './helpers/app.ts';
import { longDataDir, removeDataDir } from './helpers/data-dir.ts';

const CLI = path.resolve(import.meta.dirname, '..', 'src', 'cli', 'admin.ts');

test('the operator CLI creates a user, changes the plan and shows usage', async () => {
  const dir = await longDataDir('cli');
  const runWithInput = (input: string, ...args: string[]) =>
    spawnSync(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dir, PASSWORD_HASH_COST: '12' },
      encoding: 'utf8',
      input,
      timeout: 30_000,
    });
  const run = (...args: string[]) => runWithInput('', ...args);
  try {
    const created = run(
      'create-user',
      '--email',
      'Ops@Example.com',
      '--password',
      'long enough pw',
    );
    assert.equal(created.status, 0, created.stderr);
    assert.match(created.stdout, /created user \d+ <ops@example.com> on plan free/);
    const dup = run('create-user', '--email', 'ops@example.com', '--password', 'long enough pw');
    assert.equal(dup.status, 1);
    assert.match(dup.stderr, /already exists/);
    const plan = run('set-plan', '--email', 'ops@example.com', '--plan', 'pro');
    assert.equal(plan.status, 0, plan.stderr);
    const usage = run('usage', '--email', 'ops@example.com');
    assert.equal(usage.status, 0, usage.stderr);
    assert.match(usage.stdout, /plan:\s+pro/);
    assert.match(usage.stdout, /used:\s+0 of 5000/);
    const bad = run('set-plan', '--email', 'ops@example.com', '--plan', 'gold');
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /--plan must be one of free, pro/);
    assert.equal(run('frobnicate').status, 2);

    const piped = runWithInput(
      'from stdin pw\nignored\n',
      'create-user',
      '--email',
      'piped@example.com',
      '--password-stdin',
    );
    assert.equal(piped.status, 0, piped.stderr);
    const empty = runWithInput('', 'create-user', '--email', 'e@example.com', '--password-stdin');
    assert.equal(empty.status, 1);
    assert.match(empty.stderr, /no password on stdin/);
  } finally {
    await removeDataDir(dir);
  }
});

test('a running SQLite node answers with the plan the operator CLI just set', async () => {
  // The CLI is another process on the database file: the node, which remembers key rows
  // between requests (ARCHITECTURE.md, "Remembered rows"), must see its commits at once.
  const t = await startApp({ db: 'sqlite' });
  try {
    const u = await account(t, { key: true });
    const usage = async () => {
      const res = await t.fetch('/v1/usage', { headers: { 'x-api-key': u.key } });
      return { status: res.status, body: (await res.json()) as { plan?: string } };
    };
    assert.equal((await usage()).body.plan, 'free');
    assert.equal((await usage()).body.plan, 'free', 'asked again: the remembered row');
    const set = spawnSync(
      process.execPath,
      [CLI, 'set-plan', '--email', u.email, '--plan', 'pro'],
      {
        env: { PATH: process.env.PATH ?? '', DATA_DIR: t.dataDir },
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    assert.equal(set.status, 0, set.stderr);
    assert.equal((await usage()).body.plan, 'pro', 'the very next request');
  } finally {
    await t.close();
  }
});
