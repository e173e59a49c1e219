/**
 * Storage destinations (docs/destinations.md) through the HTTP surface, with a real
 * S3-compatible server (s3rver, in a process of its own) standing in for the customer's
 * bucket, reached over loopback because EGRESS_ALLOWLIST names it: destinations made only
 * after a test write, their secret never answered nor logged nor stored in the clear, captures
 * written at the templated key with the right bytes and type, `hosted: false`, an upload that
 * fails later (the store stopped), another account's destinations, and a batch of ten.
 * On SQLite and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { newApiKey } from '../helpers/accounts.ts';
import { type DbKind, startApp, type TestApp } from '../helpers/app.ts';
import { listFiles } from '../helpers/data-dir.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { type S3Process, startS3Process } from '../helpers/s3rver-process.ts';
import { waitForJob } from '../helpers/webhooks.ts';

const SECRET = 'S3RVER';

for (const db of ['sqlite', 'postgres'] as const satisfies readonly DbKind[]) {
  describe(`storage destinations (${db})`, () => {
    let site: FixtureSite;
    let s3: S3Process;
    let t: TestApp;
    let key: string;
    let other: string;
    let bucket: S3Client;

    before(async () => {
      site = await startSite({ '/page': page('<h1>into your bucket</h1>') });
      s3 = await startS3Process();
      t = await startApp({
        db,
        env: {
          EGRESS_ALLOWLIST: [
            site.hostPort,
            new URL(s3.endpoint).host,
            `minio.test:${new URL(s3.endpoint).port}`,
          ].join(','),
        },
        // Names only the egress rules' resolver knows (no real DNS): minio.test is the store,
        // rebind.test a name that resolves to a private address.
        resolver: {
          resolve: async (name) => {
            if (name === 'minio.test') return { addresses: ['127.0.0.1'] };
            if (name === 'rebind.test') return { addresses: ['10.0.0.7'] };
            throw new Error(`no such name in this test: ${name}`);
          },
        },
        plans: { pro: { rate_per_minute: 1000 } },
      });
      key = await newApiKey(t, { plan: 'pro' });
      other = await newApiKey(t, { plan: 'pro' });
      bucket = new S3Client({
        endpoint: s3.endpoint,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: SECRET },
      });
    });
    after(async () => {
      bucket?.destroy();
      await t?.close();
      await s3?.close();
      await site?.close();
    });

    const call = async (
      method: string,
      path: string,
      options: { json?: unknown; as?: string } = {},
    ) => {
      const res = await t.fetch(path, {
        method,
        headers: { 'x-api-key': options.as ?? key },
        ...(options.json !== undefined ? { json: options.json } : {}),
      });
      const text = await res.text();
      assert.ok(!text.includes(`"${SECRET}"`), 'no answer holds the secret');
      return {
        status: res.status,
        body: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
      };
    };
    const destinationBody = (extra: Record<string, unknown> = {}) => ({
      name: 'my bucket',
      endpoint: s3.endpoint,
      region: 'us-east-1',
      bucket: s3.bucket,
      prefix: `shots-${db}`,
      access_key_id: 'S3RVER',
      secret_access_key: SECRET,
      ...extra,
    });
    const objectAt = async (objectKey: string) => {
      const out = await bucket.send(new GetObjectCommand({ Bucket: s3.bucket, Key: objectKey }));
      return {
        type: out.ContentType,
        bytes: Buffer.from((await out.Body?.transformToByteArray()) ?? []),
      };
    };
    const used = async () => {
      const res = await t.fetch('/v1/usage', { headers: { 'x-api-key': key } });
      return ((await res.json()) as { used: number }).used;
    };
    let destination = '';

    it('saves a destination only after a test write, and never answers its secret', async () => {
      const created = await call('POST', '/v1/storage-destinations', { json: destinationBody() });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      destination = String(created.body.id);
      assert.match(destination, /^dst_[0-9A-Za-z]{24}$/);
      assert.equal(created.body.prefix, `shots-${db}`);
      assert.equal(created.body.path_style, true);
      assert.ok(!('secret_access_key' in created.body) && !('access_key_id' in created.body));
      // The test object was written and deleted again.
      const listed = await bucket.send(
        new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `shots-${db}/.shotsmith/` }),
      );
      assert.equal(listed.KeyCount ?? 0, 0);
      const list = await call('GET', '/v1/storage-destinations');
      assert.deepEqual(
        (list.body.data as Array<{ id: string }>).map((d) => d.id),
        [destination],
      );
      assert.equal((await call('GET', `/v1/storage-destinations/${destination}`)).status, 200);
      const tested = await call('POST', `/v1/storage-destinations/${destination}/test`);
      assert.equal(tested.status, 200);
    });

    it("refuses what the bucket refuses, with the provider's code, saving nothing", async () => {
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        // s3rver checks the access key id (it does not verify V4 signatures, so a wrong secret
        // alone passes there; a real store answers SignatureDoesNotMatch the same way).
        [{ access_key_id: 'NOT-A-KEY' }, /InvalidAccessKeyId/],
        [{ bucket: 'no-such-bucket-here' }, /NoSuchBucket/],
      ];
      for (const [extra, code] of cases) {
        const { status, body } = await call('POST', '/v1/storage-destinations', {
          json: destinationBody(extra),
        });
        assert.equal(status, 400, JSON.stringify(body));
        assert.equal(body.code, 'storage_test_failed');
        assert.match(String(body.error), code);
      }
      const list = await call('GET', '/v1/storage-destinations');
      assert.equal((list.body.data as unknown[]).length, 1);
    });

    it("connects to the address the egress rules checked, by the rules' own resolver", async () => {
      const port = new URL(s3.endpoint).port;
      // minio.test resolves only through the egress resolver: that the store answered at all
      // (s3rver takes a bucket name from a named host, so it answers NoSuchBucket) shows the
      // connection went to the address the rules checked.
      const named = await call('POST', '/v1/storage-destinations', {
        json: destinationBody({ endpoint: `http://minio.test:${port}`, name: 'by name' }),
      });
      assert.equal(named.body.code, 'storage_test_failed', JSON.stringify(named.body));
      assert.match(String(named.body.error), /NoSuchBucket \(HTTP 404\)/);
      // A name that resolves to a private address is refused when connecting.
      const rebind = await call('POST', '/v1/storage-destinations', {
        json: destinationBody({ endpoint: 'https://rebind.test' }),
      });
      assert.equal(rebind.status, 400, JSON.stringify(rebind.body));
      assert.equal(rebind.body.code, 'url_not_allowed');
      assert.match(String(rebind.body.error), /^endpoint /);
    });

    it('judges the endpoint by the egress rules before any connection', async () => {
      for (const endpoint of [
        'http://10.0.0.5:9000',
        'https://169.254.169.254',
        'http://127.0.0.1:1',
      ]) {
        const { status, body } = await call('POST', '/v1/storage-destinations', {
          json: destinationBody({ endpoint }),
        });
        assert.equal(status, 400, endpoint);
        assert.equal(body.code, 'url_not_allowed');
        assert.match(String(body.error), /^endpoint /);
      }
      const free = await newApiKey(t);
      const refused = await call('POST', '/v1/storage-destinations', {
        json: destinationBody(),
        as: free,
      });
      assert.equal(refused.body.code, 'plan_restriction');
    });

    it('writes a capture at the templated key, with its bytes and type', async () => {
      const start = await used();
      const { status, body } = await call('POST', '/v1/screenshots', {
        json: {
          url: `${site.origin}/page?n=1`,
          width: 320,
          height: 200,
          storage: { destination, path: 'captures/{year}/{host}/{id}.{ext}' },
        },
      });
      assert.equal(status, 201, JSON.stringify(body));
      const copy = body.storage as {
        key: string;
        bucket: string;
        destination: string;
        etag: string;
      };
      assert.equal(copy.destination, destination);
      assert.equal(copy.bucket, s3.bucket);
      const year = new Date().getUTCFullYear();
      assert.match(
        copy.key,
        new RegExp(`^shots-${db}/captures/${year}/127\\.0\\.0\\.1/[^/]+\\.png$`),
      );
      const object = await objectAt(copy.key);
      assert.equal(object.type, 'image/png');
      const hosted = await fetch(String(body.image_url));
      assert.deepEqual(Buffer.from(await hosted.arrayBuffer()), object.bytes);
      assert.equal(await used(), start + 1);
    });

    it('hosted: false keeps no copy here', async () => {
      const { status, body } = await call('POST', '/v1/screenshots', {
        json: {
          url: `${site.origin}/page?n=2`,
          width: 320,
          height: 200,
          storage: { destination, hosted: false },
        },
      });
      assert.equal(status, 201, JSON.stringify(body));
      assert.ok(!('image_url' in body));
      const copy = body.storage as { key: string };
      assert.ok((await objectAt(copy.key)).bytes.length > 100);
      assert.ok(!('id' in body), 'no record to read it by');
    });

    it('another account can neither use nor see a destination', async () => {
      const use = await call('POST', '/v1/screenshots', {
        json: { url: `${site.origin}/page?n=3`, storage: { destination } },
        as: other,
      });
      assert.equal(use.status, 400);
      assert.match(String(use.body.error), /storage\.destination/);
      assert.equal(
        (await call('GET', `/v1/storage-destinations/${destination}`, { as: other })).status,
        404,
      );
      assert.equal(
        (await call('DELETE', `/v1/storage-destinations/${destination}`, { as: other })).status,
        404,
      );
      const list = await call('GET', '/v1/storage-destinations', { as: other });
      assert.deepEqual(list.body.data, []);
    });

    it('a batch of ten lands in the bucket', async () => {
      const res = await call('POST', '/v1/screenshots/batch', {
        json: {
          requests: Array.from({ length: 10 }, (_, i) => ({
            url: `${site.origin}/page?batch=${i}`,
            width: 320,
            height: 200,
            storage: { destination, path: 'batch/{id}-{hash}.{ext}' },
          })),
        },
      });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      const jobs = res.body.jobs as Array<{ status_url: string }>;
      for (const job of jobs) {
        const done = await waitForJob(job.status_url, key);
        assert.equal(done.status, 'succeeded', JSON.stringify(done));
        const copy = done.storage as { key: string };
        assert.match(copy.key, new RegExp(`^shots-${db}/batch/[^/]+-[0-9a-f]{32}\\.png$`));
        assert.ok((await objectAt(copy.key)).bytes.length > 100);
      }
    });

    it("a monitor's runs land in the bucket", async () => {
      const created = await call('POST', '/v1/monitors', {
        json: {
          url: `${site.origin}/page?monitor=1`,
          every: '1d',
          options: {
            width: 320,
            height: 200,
            storage: { destination, path: 'monitor/{id}.{ext}' },
          },
        },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const id = String(created.body.id);
      for (let n = 0; n < 2; n++) {
        const started = await call('POST', `/v1/monitors/${id}/run`);
        assert.equal(started.status, 202, JSON.stringify(started.body));
        const runId = String(started.body.id);
        const end = Date.now() + 60_000;
        for (;;) {
          const runs = await call('GET', `/v1/monitors/${id}/runs`);
          const run = (runs.body.data as Array<{ id: string; status: string }>).find(
            (r) => r.id === runId,
          );
          if (run && run.status !== 'running') {
            assert.equal(run.status, 'succeeded', JSON.stringify(run));
            break;
          }
          assert.ok(Date.now() < end, 'the run ended in time');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      const listed = await bucket.send(
        new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `shots-${db}/monitor/` }),
      );
      assert.equal(listed.KeyCount, 2, 'one object a run');
      // hosted: false is refused for a monitor, which compares with what it keeps here.
      const refused = await call('POST', '/v1/monitors', {
        json: {
          url: `${site.origin}/page?monitor=2`,
          every: '1d',
          options: { storage: { destination, hosted: false } },
        },
      });
      assert.equal(refused.status, 400);
      await call('DELETE', `/v1/monitors/${id}`);
    });

    it('an upload that fails is a 502 with no unit spent and nothing hosted', async () => {
      const start = await used();
      // The customer's store goes away after the destination was made.
      await s3.close();
      const { status, body } = await call('POST', '/v1/screenshots', {
        json: { url: `${site.origin}/page?n=4`, width: 320, height: 200, storage: { destination } },
      });
      assert.equal(status, 502, JSON.stringify(body));
      assert.equal(body.code, 'storage_destination_error');
      // Nothing hosted for it: the account's listing has no record of that page.
      const list = await call('GET', '/v1/screenshots?limit=100');
      assert.ok(!JSON.stringify(list.body).includes('page?n=4'));
      assert.equal(await used(), start);
    });

    it('keeps the secret out of every log line and stored row', async () => {
      assert.ok(t.logs.length > 0);
      assert.ok(
        !t.logs.some((line) => line.includes(`"${SECRET}"`) || line.includes(`:${SECRET}`)),
      );
      const rows = await t.deps.database.db
        .selectFrom('storage_destinations')
        .selectAll()
        .execute();
      assert.ok(rows.length > 0);
      for (const row of rows) assert.notEqual(row.secret_sealed, SECRET);
      assert.ok(!JSON.stringify(rows.map((r) => r.secret_sealed)).includes(SECRET));
      if (db === 'sqlite') {
        for (const file of await listFiles(t.dataDir)) {
          if (!/\.db$|-wal$/.test(file)) continue;
          // The access key id is the same word as the secret in s3rver; the secret's own
          // field must not hold it.
          const bytes = await readFile(file);
          assert.ok(!bytes.includes(`secret_access_key":"${SECRET}`));
        }
      }
      const deleted = await call('DELETE', `/v1/storage-destinations/${destination}`);
      assert.equal(deleted.status, 200);
    });
  });
}
