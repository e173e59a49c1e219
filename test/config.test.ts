import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { longDataDir, removeDataDir } from './helpers/data-dir.ts';

const MAIN = path.resolve(import.meta.dirname, '..', 'src', 'main.ts');

function boot(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        PORT: '65000', // never bound: every boot here stops at configuration
        LOG_LEVEL: 'silent',
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += String(d);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe('configuration at boot', () => {
  it('refuses to start and lists every problem', async () => {
    const dir = await longDataDir('cfg');
    const { code, stderr } = await boot({
      DATA_DIR: dir,
      PORT: 'eighty',
      DATABASE_URL: 'mysql://x',
      LOG_LEVEL: 'loud',
      RENDER_CONCURRENCY: '0',
      TRUST_PROXY: 'everyone',
    });
    assert.equal(code, 78);
    for (const name of ['PORT', 'DATABASE_URL', 'LOG_LEVEL', 'RENDER_CONCURRENCY', 'TRUST_PROXY']) {
      assert.match(stderr, new RegExp(name), `${name} named in:\n${stderr}`);
    }
  });

  it('stops a production boot that would run the local billing provider, unless told', async () => {
    const dir = await longDataDir('cfg');
    for (const env of [{}, { BILLING_PROVIDER: 'local' }] as Record<string, string>[]) {
      const { code, stderr } = await boot({ DATA_DIR: dir, NODE_ENV: 'production', ...env });
      assert.equal(code, 78, stderr);
      assert.match(stderr, /invalid configuration/);
      assert.match(stderr, /local billing provider is refused with NODE_ENV=production/);
      assert.match(stderr, /LOCAL_BILLING_IN_PRODUCTION=1/);
    }
    // With the switch billing passes: the boot stops only on the too-short METRICS_TOKEN.
    const told = await boot({
      DATA_DIR: dir,
      NODE_ENV: 'production',
      LOCAL_BILLING_IN_PRODUCTION: '1',
      METRICS_TOKEN: 'x',
    });
    assert.equal(told.code, 78);
    assert.doesNotMatch(told.stderr, /billing/);
    assert.match(told.stderr, /METRICS_TOKEN/);
    await removeDataDir(dir);
  });

  it('stops a production boot without SERVER_SECRET, naming it; starts with one', async () => {
    const dir = await longDataDir('cfg');
    const production = { DATA_DIR: dir, NODE_ENV: 'production', LOCAL_BILLING_IN_PRODUCTION: '1' };
    const { code, stderr } = await boot(production);
    assert.equal(code, 78, stderr);
    assert.match(stderr, /invalid configuration/);
    assert.match(stderr, /SERVER_SECRET is required with NODE_ENV=production/);
    // Outside production the same boot goes past configuration (a secret is kept in the
    // database). It is stopped before it listens by a bad PLANS_FILE, read after the config.
    const missing = path.join(dir, 'no-such-plans.json');
    const dev = await boot({ DATA_DIR: dir, PLANS_FILE: missing });
    assert.equal(dev.code, 78, dev.stderr);
    assert.doesNotMatch(dev.stderr, /SERVER_SECRET/);
    assert.match(dev.stderr, /cannot read/);
    // With a secret, production goes past configuration too, and stops at the same file.
    const withSecret = await boot({
      ...production,
      SERVER_SECRET: 'x'.repeat(40),
      PLANS_FILE: missing,
    });
    assert.equal(withSecret.code, 78, withSecret.stderr);
    assert.doesNotMatch(withSecret.stderr, /SERVER_SECRET/);
    assert.match(withSecret.stderr, /cannot read/);
    // A start as root says that Chromium's renderers go unsandboxed (the suite runs as root
    // in CI), in production and in development alike.
    const asRoot = /running as root: Chromium's renderers run without their sandbox/;
    for (const start of [withSecret, dev]) {
      if (process.getuid?.() === 0) assert.match(start.stderr, asRoot);
      else assert.doesNotMatch(start.stderr, asRoot);
    }
    await removeDataDir(dir);
  });

  it('refuses a PLANS_FILE with unknown plans, fields or bad values', async () => {
    const dir = await longDataDir('cfg');
    const file = path.join(dir, 'plans.json');
    await writeFile(
      file,
      JSON.stringify({
        enterprise: {},
        free: { monthly_quota: -1, colour: 'red', formats: ['gif'] },
      }),
    );
    const { code, stderr } = await boot({ DATA_DIR: dir, PLANS_FILE: file });
    assert.equal(code, 78);
    assert.match(stderr, /unknown plan "enterprise"/);
    assert.match(stderr, /free\.monthly_quota/);
    assert.match(stderr, /free\.colour is not a plan field/);
    assert.match(stderr, /free\.formats/);
    await writeFile(file, '{not json');
    const broken = await boot({ DATA_DIR: dir, PLANS_FILE: file });
    assert.equal(broken.code, 78);
    assert.match(broken.stderr, /not valid JSON/);
  });
});

describe('PLANS_FILE overrides', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({
      db: 'sqlite',
      plans: {
        free: { monthly_quota: 7, full_page: false },
        pro: { rate_per_minute: 120, concurrent_renders: 8 },
      },
    });
  });
  after(() => t.close());

  it('applies overridden fields and keeps the rest of each plan', async () => {
    const res = await t.fetch('/v1/plans');
    const { data } = (await res.json()) as { data: Array<Record<string, unknown>> };
    const free = data.find((p) => p.name === 'free');
    const pro = data.find((p) => p.name === 'pro');
    assert.equal(free?.monthly_quota, 7);
    assert.equal(free?.full_page, false);
    assert.equal(free?.rate_per_minute, 5);
    assert.equal(pro?.rate_per_minute, 120);
    assert.equal(pro?.monthly_quota, 5000);
    assert.equal(pro?.concurrent_renders, 8);
    assert.equal(free?.concurrent_renders, 1);
  });
});
