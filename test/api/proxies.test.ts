/**
 * Captures through a proxy (docs/proxies.md), through the HTTP surface with real Chromium and
 * real proxies on loopback that record what they carried (test/helpers/proxies.ts): an HTTP
 * proxy with Basic authentication, the same over TLS, and a SOCKS5 proxy with a username and
 * password, as operator proxies (PROXIES_FILE) and as the caller's own.
 *
 * Nothing goes direct: the operator proxies resolve names themselves (`remote_dns`), and the
 * target's name (`far.test`) resolves nowhere for the service (its resolver is a test double
 * that knows no name but `near.test`), so a page, subresource or redirect that skipped the
 * proxy could not load. The caller's own proxy is judged by the egress rules: it is reached
 * only because EGRESS_ALLOWLIST names its loopback address, and the target it is given
 * (`near.test`) resolves to loopback here and is allowlisted too.
 *
 * On SQLite and on PostgreSQL. Every connection stays on 127.0.0.0/8.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { type DbKind, postCapture, startApp, type TestApp } from '../helpers/app.ts';
import { listFiles } from '../helpers/data-dir.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import {
  makeTestCertificate,
  startHttpProxy,
  startSocks5Proxy,
  type TestProxy,
} from '../helpers/proxies.ts';

const USER = 'proxy-user';
const PASSWORD = 'pr0xy-s3cret-pw';
const AUTH = { username: USER, password: PASSWORD };
const GREEN = 'rgb(0, 160, 0)';

/** Every name the proxies know goes to the fixture site's loopback address. */
const HOSTS = { 'far.test': '127.0.0.1', 'near.test': '127.0.0.1' };

for (const db of ['sqlite', 'postgres'] as const satisfies readonly DbKind[]) {
  describe(`captures through proxies (${db})`, () => {
    let site: FixtureSite;
    let t: TestApp;
    let key: string;
    const proxies: Record<string, TestProxy> = {};
    /** Beacons of the geolocation page, by id. */
    const geo = new Map<string, string>();

    before(async () => {
      site = await startSite({
        '/start': (req, res) => {
          const query = new URL(req.url ?? '/', 'http://x').search;
          res.writeHead(302, { location: `/page${query}` }).end();
        },
        '/page': page(
          '<h1>through the proxy</h1><img src="/dot.png" width="8" height="8">',
          '<link rel="stylesheet" href="/style.css">',
        ),
        '/style.css': (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/css' }).end(`body { background: ${GREEN} }`);
        },
        '/dot.png': (_req, res) => {
          res.writeHead(204).end();
        },
        // An https image: Chromium asks the proxy for a tunnel (CONNECT); the site does not
        // speak TLS, so the image fails, but the tunnel was asked of the proxy.
        '/tls-probe': (req, res) => {
          const port = new URL(req.url ?? '/', 'http://x').searchParams.get('port');
          res
            .writeHead(200, { 'content-type': 'text/html' })
            .end(page(`<img src="https://far.test:${port}/probe.png"><p>probe</p>`));
        },
        '/geo': page(
          '<p>geo</p>',
          `<script>
            const id = new URLSearchParams(location.search).get('id');
            const send = (v) => { new Image().src = '/geo-beacon?id=' + id + '&v=' + encodeURIComponent(v); };
            navigator.geolocation.getCurrentPosition(
              (p) => send(p.coords.latitude + ',' + p.coords.longitude + ',' + p.coords.accuracy),
              (e) => send('error ' + e.code));
          </script>`,
        ),
        // A target that dresses its 502 as the egress proxy's marks.
        '/spoof': (_req, res) => {
          res
            .writeHead(502, {
              'content-type': 'text/html',
              'x-egress-proxy-error': 'proxy authentication failed',
              'x-egress-error': 'unreachable',
            })
            .end('<p>a page of its own</p>');
        },
        '/geo-beacon': (req, res) => {
          const q = new URL(req.url ?? '/', 'http://x').searchParams;
          geo.set(q.get('id') ?? '', q.get('v') ?? '');
          res.writeHead(204).end();
        },
      });
      const cert = makeTestCertificate();
      proxies.http = await startHttpProxy({ auth: AUTH, hosts: HOSTS });
      proxies.https = await startHttpProxy({
        auth: AUTH,
        hosts: HOSTS,
        tls: { key: cert.key, cert: cert.cert },
      });
      proxies.socks = await startSocks5Proxy({ auth: AUTH, hosts: HOSTS });
      proxies.de2 = await startHttpProxy({ auth: AUTH, hosts: HOSTS });
      proxies.caller = await startHttpProxy({ auth: AUTH, hosts: HOSTS });
      proxies.callerSocks = await startSocks5Proxy({ auth: AUTH, hosts: HOSTS });
      proxies.hang = await startHttpProxy({ mode: 'hang', hosts: HOSTS });
      proxies.stranger = await startHttpProxy({ hosts: HOSTS });
      const dir = (await import('node:os')).tmpdir();
      const caFile = join(dir, `shotsmith-proxy-ca-${process.pid}-${db}.pem`);
      await writeFile(caFile, cert.ca);
      const operator = (id: string, url: string, countries: string[], extra = {}) => ({
        id,
        url,
        countries,
        remote_dns: true,
        ...extra,
      });
      const file = join(dir, `shotsmith-proxies-${process.pid}-${db}.json`);
      await writeFile(
        file,
        JSON.stringify([
          operator('de-1', proxies.http.url, ['de']),
          operator('de-2', proxies.de2.url, ['DE']),
          operator('tls-1', proxies.https.url, ['fr'], { ca: caFile }),
          operator('socks-1', proxies.socks.url, ['nl']),
          operator('socks-h', proxies.socks.url.replace('socks5://', 'socks5h://'), []),
        ]),
      );
      t = await startApp({
        db,
        env: {
          PROXIES_FILE: file,
          PROXY_TIMEOUT_MS: '1500',
          EGRESS_ALLOWLIST: [
            `near.test:${site.port}`,
            `127.0.0.1:${site.port}`,
            `127.0.0.1:${proxies.caller.port}`,
            `127.0.0.1:${proxies.callerSocks.port}`,
            `127.0.0.1:${proxies.hang.port}`,
            '127.0.0.1:9',
          ].join(','),
        },
        resolver: {
          resolve: async (name) => {
            if (name === 'near.test') return { addresses: ['127.0.0.1'] };
            throw new Error(`no such name in this test: ${name}`);
          },
        },
      });
      key = await newApiKey(t, { plan: 'pro' });
    });
    after(async () => {
      await t?.close();
      for (const proxy of Object.values(proxies)) await proxy.close();
      await site?.close();
    });

    const far = (path: string) => `http://far.test:${site.port}${path}`;
    const near = (path: string) => `http://near.test:${site.port}${path}`;
    const used = async (): Promise<number> => {
      const res = await t.fetch('/v1/usage', { headers: { 'x-api-key': key } });
      return ((await res.json()) as { used: number }).used;
    };
    const capture = async (body: Record<string, unknown>) => {
      const res = await postCapture(t, key, { fresh: true, ...body });
      const text = await res.text();
      assert.ok(!text.includes(PASSWORD), 'no answer shows the password');
      return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
    };
    const targets = (proxy: TestProxy, id: string) =>
      proxy.records
        .filter((r) => r.target.includes(id) || r.kind !== 'request')
        .map((r) => r.target);

    it('lists the operator proxies by id and country, never their addresses', async () => {
      const res = await t.fetch('/v1/proxies', { headers: { 'x-api-key': key } });
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.deepEqual(JSON.parse(text).data, [
        { id: 'de-1', countries: ['de'] },
        { id: 'de-2', countries: ['de'] },
        { id: 'tls-1', countries: ['fr'] },
        { id: 'socks-1', countries: ['nl'] },
        { id: 'socks-h', countries: [] },
      ]);
      assert.ok(!text.includes(PASSWORD) && !text.includes(String(proxies.http?.port)));
      assert.equal((await t.fetch('/v1/proxies')).status, 401);
    });

    it('an HTTP proxy with Basic auth carries the page, its redirect and subresources', async () => {
      const http = proxies.http as TestProxy;
      const { status, body } = await capture({ url: far('/start?id=h1'), proxy: 'de-1' });
      assert.equal(status, 201, JSON.stringify(body));
      const carried = http.records.filter((r) => r.kind === 'request' && r.authorized);
      for (const path of ['/start?id=h1', '/page?id=h1', '/style.css', '/dot.png']) {
        assert.ok(
          carried.some((r) => r.target === far(path)),
          `${path} went through the proxy, absolute-form: ${JSON.stringify(targets(http, ''))}`,
        );
      }
    });

    it('an https:// proxy (TLS to the proxy, its CA from PROXIES_FILE) carries the capture', async () => {
      const https = proxies.https as TestProxy;
      const { status, body } = await capture({ url: far('/start?id=t1'), proxy: 'tls-1' });
      assert.equal(status, 201, JSON.stringify(body));
      assert.ok(https.records.some((r) => r.kind === 'request' && r.target === far('/page?id=t1')));
    });

    it('an https target goes through an HTTP proxy by CONNECT', async () => {
      const http = proxies.http as TestProxy;
      const url = far(`/tls-probe?id=c1&port=${site.port}`);
      const { status } = await capture({ url, proxy: 'de-1' });
      assert.equal(status, 201);
      assert.ok(
        http.records.some((r) => r.kind === 'connect' && r.target === `far.test:${site.port}`),
        JSON.stringify(targets(http, '')),
      );
    });

    it('SOCKS5 with a password carries the capture, by name (remote DNS)', async () => {
      const socks = proxies.socks as TestProxy;
      const before = socks.records.length;
      for (const id of ['socks-1', 'socks-h']) {
        const { status, body } = await capture({ url: far(`/start?id=${id}`), proxy: id });
        assert.equal(status, 201, JSON.stringify(body));
      }
      const tunnels = socks.records.slice(before).filter((r) => r.kind === 'socks-connect');
      assert.ok(tunnels.length >= 2);
      for (const r of tunnels) {
        assert.equal(r.target, `far.test:${site.port}`);
        assert.equal(r.addressType, 'domain');
        assert.ok(r.authorized);
      }
    });

    it('proxy_country takes the proxies serving it in turn', async () => {
      const counts = () => [proxies.http, proxies.de2].map((p) => p?.records.length ?? 0);
      const start = counts();
      for (const id of ['rr1', 'rr2']) {
        const { status } = await capture({ url: far(`/page?id=${id}`), proxy_country: 'DE' });
        assert.equal(status, 201);
      }
      const end = counts();
      assert.ok(
        end.every((n, i) => n > (start[i] ?? 0)),
        `both served: ${start} -> ${end}`,
      );
    });

    it("the caller's own proxy, by URL: HTTP, and SOCKS5 with and without remote names", async () => {
      const caller = proxies.caller as TestProxy;
      const socks = proxies.callerSocks as TestProxy;
      let res = await capture({ url: near('/start?id=u1'), proxy: caller.url });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.ok(
        caller.records.some((r) => r.kind === 'request' && r.target === near('/page?id=u1')),
      );
      res = await capture({ url: near('/page?id=u2'), proxy: socks.url });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      // socks5: the name is resolved and judged here, and the proxy given the checked address.
      assert.ok(
        socks.records.some(
          (r) => r.addressType === 'ipv4' && r.target === `127.0.0.1:${site.port}`,
        ),
      );
      const h = socks.url.replace('socks5://', 'socks5h://');
      res = await capture({ url: near('/page?id=u3'), proxy: h });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.ok(
        socks.records.some(
          (r) => r.addressType === 'domain' && r.target === `near.test:${site.port}`,
        ),
      );
    });

    it('two captures through two proxies at once do not cross', async () => {
      const [a, b] = [proxies.http as TestProxy, proxies.socks as TestProxy];
      const before = b.records.length;
      const [ra, rb] = await Promise.all([
        capture({ url: far('/page?id=cross-a'), proxy: 'de-1' }),
        capture({ url: far('/page?id=cross-b'), proxy: 'socks-h' }),
      ]);
      assert.equal(ra.status, 201);
      assert.equal(rb.status, 201);
      assert.ok(a.records.some((r) => r.target.includes('cross-a')));
      assert.ok(!a.records.some((r) => r.target.includes('cross-b')), 'b never went through a');
      assert.ok(b.records.length > before, 'b went through its own');
    });

    it('wrong credentials, a dead proxy and a hanging one are 502 proxy_error, no unit spent', async () => {
      const caller = proxies.caller as TestProxy;
      const socks = proxies.callerSocks as TestProxy;
      const start = await used();
      const cases: Array<[string, RegExp]> = [
        [caller.url.replace(PASSWORD, 'wrong'), /proxy authentication failed/],
        [socks.url.replace(PASSWORD, 'wrong'), /proxy authentication failed/],
        ['http://127.0.0.1:9', /proxy could not be reached/],
        [(proxies.hang as TestProxy).url, /proxy timed out/],
      ];
      for (const [proxy, message] of cases) {
        const { status, body } = await capture({ url: near('/page?id=bad'), proxy });
        assert.equal(status, 502, JSON.stringify(body));
        assert.equal(body.code, 'proxy_error');
        assert.match(String(body.error), message);
      }
      assert.equal(await used(), start, 'no unit spent');
    });

    it("refuses a caller's proxy on a private, metadata or unlisted address before connecting", async () => {
      const stranger = proxies.stranger as TestProxy;
      for (const proxy of [
        'http://10.0.0.8:3128',
        'socks5://169.254.169.254:1080',
        `http://127.0.0.1:${stranger.port}`,
        'http://[::1]:3128',
      ]) {
        const { status, body } = await capture({ url: near('/page'), proxy });
        assert.equal(status, 400, proxy);
        assert.equal(body.code, 'url_not_allowed');
        assert.match(String(body.error), /^proxy /);
      }
      assert.equal(stranger.connections, 0, 'nothing connected to the unlisted proxy');
    });

    it('refuses a private target even through a proxy', async () => {
      const http = proxies.http as TestProxy;
      const before = http.connections;
      for (const url of ['http://10.1.2.3/', 'http://127.0.0.2:9/', 'http://localhost:8/']) {
        const { status, body } = await capture({ url, proxy: 'de-1' });
        assert.equal(status, 400, `${url}: ${JSON.stringify(body)}`);
      }
      assert.equal(http.connections, before);
    });

    it('names what is wrong with a choice, with no unit spent', async () => {
      const start = await used();
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ proxy: 'nope' }, /proxy "nope"/],
        [{ proxy_country: 'jp' }, /proxy_country "jp"/],
        [{ proxy: 'de-1', proxy_country: 'de' }, /proxy and proxy_country/],
        [{ proxy: 'ftp://127.0.0.1:21' }, /proxy must be an http, https, socks5 or socks5h URL/],
        [{ proxy_country: 'deu' }, /proxy_country/],
        // Queued work is refused when it is queued, not when it runs.
        [{ proxy: 'nope', async: true }, /proxy "nope"/],
        [{ proxy: 'http://10.0.0.8:3128', async: true }, /^proxy /],
      ];
      for (const [options, message] of cases) {
        const { status, body } = await capture({ url: near('/page'), ...options });
        assert.equal(status, 400, JSON.stringify(options));
        assert.match(String(body.error), message);
      }
      const free = await newApiKey(t);
      const res = await postCapture(t, free, { url: near('/page'), proxy: 'de-1' });
      assert.equal(res.status, 400);
      assert.equal(((await res.json()) as { code: string }).code, 'plan_restriction');
      assert.equal(await used(), start);
    });

    it('geolocation reaches the Geolocation API; without it the page is denied', async () => {
      // The API is for secure contexts only: http://127.0.0.1 is one, http://near.test is not.
      const secure = (path: string) => `http://127.0.0.1:${site.port}${path}`;
      let res = await capture({
        url: secure('/geo?id=g1'),
        geolocation: { latitude: 48.8566, longitude: 2.3522, accuracy: 25 },
      });
      assert.equal(res.status, 201);
      res = await capture({ url: secure('/geo?id=g2') });
      assert.equal(res.status, 201);
      assert.equal(geo.get('g1'), '48.8566,2.3522,25');
      assert.match(geo.get('g2') ?? '', /^error 1$/);
    });

    it("a target cannot pass its answer off as the egress proxy's", async () => {
      for (const proxy of [undefined, 'de-1']) {
        const url = proxy ? far('/spoof') : near('/spoof');
        const { status, body } = await capture({ url, ...(proxy ? { proxy } : {}) });
        assert.equal(status, 201, JSON.stringify(body));
      }
    });

    it('keeps the password out of every log line and stored row', async () => {
      // A render link that carries a proxy URL is refused, and its URL logged redacted.
      const link = await t.fetch(
        `/v1/render?key_id=1&expires=1&signature=00&url=${encodeURIComponent(near('/page'))}` +
          `&proxy=${encodeURIComponent(proxies.caller?.url ?? '')}`,
      );
      assert.notEqual(link.status, 200);
      // An async capture keeps its request in a row until it runs.
      const res = await capture({
        url: near('/page?id=row'),
        proxy: proxies.caller?.url,
        async: true,
      });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      assert.ok(t.logs.length > 0);
      assert.ok(!t.logs.some((line) => line.includes(PASSWORD)), 'no log line has it');
      if (db === 'sqlite') {
        for (const file of await listFiles(t.dataDir)) {
          if (!/\.(db|sqlite|wal|shm)|-wal$|-shm$/.test(file)) continue;
          const bytes = await readFile(file);
          assert.ok(!bytes.includes(PASSWORD), `${file} does not hold it`);
        }
      }
      const tables = ['capture_jobs', 'capture_batches', 'screenshots', 'monitors'] as const;
      for (const table of tables) {
        const rows = await t.deps.database.db.selectFrom(table).selectAll().execute();
        assert.ok(!JSON.stringify(rows).includes(PASSWORD), `no row of ${table} holds it`);
      }
    });
  });
}
