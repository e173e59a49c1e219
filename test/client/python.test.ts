/**
 * The Python client (packages/python) against a real running service: this starts the
 * service (its PROXIES_FILE naming loopback proxies, proxy-fixtures.ts), a fixture site, an
 * S3-compatible bucket (bucket-fixtures.ts), a Free and a Pro account, and runs the client's
 * unittest suite
 * (`python3 -m unittest discover -s packages/python/tests -v`) as a child process with their
 * addresses and keys in SHOTSMITH_TEST_* variables. The suite's service-backed tests refuse to
 * skip when SHOTSMITH_TEST_REQUIRE is set, so a missing variable is a failure here, as is any
 * failing or skipped Python test. The signing vectors are the server's own (signQuery,
 * signWebhook), so the Python signers are held to them byte for byte.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { signWebhook } from '../../src/domain/jobs/webhook-secret.ts';
import { type QueryPair, signQuery } from '../../src/lib/signed-query.ts';
import { account } from '../helpers/accounts.ts';
import { freePort, startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { runProcess } from '../helpers/subprocess.ts';
import { S3RVER_CREDENTIAL, startBucket, type TestBucket } from './bucket-fixtures.ts';
import {
  LOCATED_PAGE,
  LOCKED_PROXY_ID,
  type OperatorProxies,
  operatorProxies,
  PROXY_COUNTRY,
  PROXY_ID,
  PROXY_LISTING,
} from './proxy-fixtures.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** The whole Python run (a wheel build, a dozen captures, a batch, a webhook, a monitor run). */
const PYTHON_TIMEOUT_MS = 240_000;

describe('Python client', () => {
  let t: TestApp;
  let site: FixtureSite;
  let hookPort: number;
  let proxies: OperatorProxies;
  let bucket: TestBucket;
  before(async () => {
    site = await startSite({
      '/': page('<h1 style="font:40px sans-serif">python</h1>'),
      '/located': LOCATED_PAGE,
    });
    proxies = await operatorProxies();
    bucket = await startBucket();
    // The Python suite's webhook receiver listens here; the service may deliver to it.
    hookPort = await freePort();
    t = await startApp({
      db: 'sqlite',
      env: {
        EGRESS_ALLOWLIST: `${site.hostPort},127.0.0.1:${hookPort},${bucket.hostPort}`,
        PROXIES_FILE: proxies.file,
      },
      plans: { free: { rate_per_minute: 1000, monthly_quota: 50 }, pro: { rate_per_minute: 1000 } },
    });
  });
  after(async () => {
    await t?.close();
    await site?.close();
    await proxies?.close();
    await bucket?.close();
  });

  it('passes its unittest suite against the service', async () => {
    const free = await account(t, { key: true });
    const pro = await account(t, { plan: 'pro', key: true });
    const secretRes = await t.fetch('/v1/webhooks/secret', { cookie: pro.cookie });
    assert.equal(secretRes.status, 200, await secretRes.clone().text());
    const webhookSecret = ((await secretRes.json()) as { secret: string }).secret;

    const pairs: QueryPair[] = [
      ['url', 'https://example.com/?q=a+b&ü=😀'],
      ['hide_selectors', "[data-x='1']"],
      ['hide_selectors', '#a'],
      ['width', '320'],
      ['key_id', '7'],
      ['expires', '1767225600'],
    ];
    const hookBody = JSON.stringify({
      type: 'screenshot.succeeded',
      timestamp: '2026-01-01T00:00:00.000Z',
      data: { id: 'job_ü', status: 'succeeded' },
    });
    const vectors = {
      link: {
        secret: free.signingSecret,
        pairs,
        signature: signQuery(free.signingSecret, pairs),
      },
      webhook: {
        secret: webhookSecret,
        id: 'msg_vector',
        timestamp: 1767225600,
        body: hookBody,
        signature: signWebhook(webhookSecret, 'msg_vector', 1767225600, hookBody),
      },
    };

    const ran = await runProcess(
      'python3',
      ['-m', 'unittest', 'discover', '-s', 'packages/python/tests', '-v'],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          ...(process.env.PYENV_ROOT ? { PYENV_ROOT: process.env.PYENV_ROOT } : {}),
          PYTHONPATH: path.join(ROOT, 'packages', 'python', 'src'),
          PYTHONDONTWRITEBYTECODE: '1',
          PYTHONUNBUFFERED: '1',
          SHOTSMITH_TEST_REQUIRE: '1',
          SHOTSMITH_TEST_URL: t.url,
          SHOTSMITH_TEST_SITE: site.origin,
          SHOTSMITH_TEST_FREE_KEY: free.key,
          SHOTSMITH_TEST_FREE_KEY_ID: String(free.keyId),
          SHOTSMITH_TEST_FREE_SIGNING_SECRET: free.signingSecret,
          SHOTSMITH_TEST_PRO_KEY: pro.key,
          SHOTSMITH_TEST_WEBHOOK_SECRET: webhookSecret,
          SHOTSMITH_TEST_HOOK_PORT: String(hookPort),
          SHOTSMITH_TEST_VECTORS: JSON.stringify(vectors),
          SHOTSMITH_TEST_PROXIES: JSON.stringify(PROXY_LISTING),
          SHOTSMITH_TEST_PROXY_ID: PROXY_ID,
          SHOTSMITH_TEST_PROXY_COUNTRY: PROXY_COUNTRY,
          SHOTSMITH_TEST_LOCKED_PROXY_ID: LOCKED_PROXY_ID,
          SHOTSMITH_TEST_S3_ENDPOINT: bucket.s3.endpoint,
          SHOTSMITH_TEST_S3_BUCKET: bucket.s3.bucket,
          SHOTSMITH_TEST_S3_ACCESS_KEY_ID: S3RVER_CREDENTIAL,
          SHOTSMITH_TEST_S3_SECRET_ACCESS_KEY: S3RVER_CREDENTIAL,
        },
        timeoutMs: PYTHON_TIMEOUT_MS,
      },
    );
    const output = `exit ${ran.code}\n--- stdout\n${ran.stdout}\n--- stderr\n${ran.stderr}`;
    assert.equal(ran.code, 0, output);
    // unittest writes its summary to stderr: every test ran, none skipped.
    assert.match(ran.stderr, /\nOK\s*$/, output);
    assert.doesNotMatch(ran.stderr, /skipped/, output);
    const count = Number(/Ran (\d+) tests? in/.exec(ran.stderr)?.[1]);
    assert.ok(count >= 20, `only ${count} Python tests ran\n${output}`);
    // The Python captures that named the proxy, or its country, went through it.
    for (const query of ['python-proxy', 'python-country']) {
      assert.ok(proxies.carried(`${site.origin}/located?${query}`), query);
    }
    // The Python captures into the destination landed in the bucket: a PNG each.
    const landed = await bucket.keys('python/');
    assert.equal(landed.length, 2, JSON.stringify(landed));
    for (const key of landed) {
      const object = await bucket.object(key);
      assert.equal(object.type, 'image/png', key);
      assert.deepEqual(object.bytes.subarray(1, 4), Buffer.from('PNG'), key);
    }
  });
});
