import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { freePort, startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';

/**
 * The rendered page is hostile: every way a page can reach out is aimed at a canary on
 * another loopback address that is not allowlisted. The canary must see zero connections.
 */
describe('SSRF: a hostile page cannot reach a non-allowlisted address', () => {
  let t: TestApp;
  let site: FixtureSite;
  let canary: Server;
  let canaryConnections = 0;
  let canaryOrigin = '';
  let key = '';

  before(async () => {
    canary = createServer((socket) => {
      canaryConnections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.2', resolve));
    const port = (canary.address() as { port: number }).port;
    canaryOrigin = `http://127.0.0.2:${port}`;
    const c = canaryOrigin;
    site = await startSite({
      '/everything': page(
        `<iframe src="${c}/iframe"></iframe><img src="${c}/img.png"><link rel="stylesheet" href="${c}/css">
         <video src="${c}/video"></video><object data="${c}/object"></object>`,
        `<script>
          fetch('${c}/fetch').catch(() => {});
          fetch('http://localhost:${port}/fetch-localhost').catch(() => {});
          fetch('http://[::ffff:127.0.0.2]:${port}/fetch-mapped').catch(() => {});
          fetch('http://2130706434:${port}/fetch-decimal').catch(() => {});
          const x = new XMLHttpRequest(); x.open('GET', '${c}/xhr'); x.send();
          try { new WebSocket('ws://127.0.0.2:${port}/ws'); } catch {}
          try { new EventSource('${c}/es'); } catch {}
          try { new Worker(URL.createObjectURL(new Blob(["fetch('${c}/worker').catch(()=>{})"]))); } catch {}
          try { navigator.sendBeacon('${c}/beacon', 'x'); } catch {}
          try { window.open('${c}/popup'); } catch {}
          try { new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.2:${port}' }] }).createDataChannel('x'); } catch {}
        </script>`,
      ),
      '/meta-refresh': page(
        '<p>refreshing</p>',
        `<meta http-equiv="refresh" content="0;url=${c}/meta">`,
      ),
      '/location': page('<p>moving</p>', `<script>location.href = '${c}/location';</script>`),
      '/redirect': (_req, res) => {
        res.writeHead(302, { location: `${c}/redirected` }).end();
      },
      '/redirect-file': (_req, res) => {
        res.writeHead(302, { location: 'file:///etc/passwd' }).end();
      },
    });
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: site.hostPort },
      plans: { free: { rate_per_minute: 1000 } },
    });
    key = await newApiKey(t);
  });
  after(async () => {
    await t.close();
    await site.close();
    canary.close();
  });

  const capture = (url: string) =>
    t.fetch('/v1/screenshots', {
      method: 'POST',
      json: { url, width: 400, height: 300 },
      headers: { 'x-api-key': key },
    });

  it('subresources, fetch, XHR, WebSocket, EventSource, workers, beacons and popups are blocked; the page still renders', async () => {
    const res = await capture(`${site.origin}/everything`);
    assert.equal(res.status, 201, await res.clone().text());
    await sleep(300);
    assert.equal(canaryConnections, 0);
  });

  it('meta refresh and location changes toward the canary never connect', async () => {
    for (const p of ['/meta-refresh', '/location']) {
      const res = await capture(`${site.origin}${p}`);
      assert.ok([201, 400].includes(res.status), `${p}: ${res.status}`);
    }
    await sleep(300);
    assert.equal(canaryConnections, 0);
  });

  it('a main-document redirect to a refused address or scheme is url_not_allowed', async () => {
    for (const p of ['/redirect', '/redirect-file']) {
      const res = await capture(`${site.origin}${p}`);
      assert.equal(res.status, 400, p);
      assert.equal(((await res.json()) as { code: string }).code, 'url_not_allowed', p);
    }
    assert.equal(canaryConnections, 0);
  });

  it('the service itself is never reachable from a page, even allowlisted', async () => {
    const port = await freePort();
    const t2 = await startApp({
      db: 'sqlite',
      env: { PORT: String(port), EGRESS_ALLOWLIST: `127.0.0.1:${port},localhost:${port}` },
    });
    try {
      const k = await newApiKey(t2);
      const res = await t2.fetch('/v1/screenshots', {
        method: 'POST',
        json: { url: `${t2.url}/healthz` },
        headers: { 'x-api-key': k },
      });
      assert.equal(res.status, 400);
      assert.equal(((await res.json()) as { code: string }).code, 'url_not_allowed');
    } finally {
      await t2.close();
    }
  });
});
