/**
 * Nothing of one capture is observable by the next on the same slot. A "writer" page stores
 * everything a page can store (cookies from script and from the server, localStorage,
 * sessionStorage, IndexedDB, Cache Storage, the origin's private file system, a storage
 * bucket, a service worker, a cached stylesheet, window.name,
 * history, a permission request, and the same in a third-party iframe); a "reader" page of the
 * same origins reports, through a beacon to the fixture server, what it can see. The reader
 * must see exactly what it sees before the writer ever ran.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { startRenderer, type TestRenderer } from './helpers.ts';

/** Runs in writer and reader alike: everything a page can observe of earlier visits. */
const READ = `
async function readAll(frameReport) {
  const out = {};
  out.cookie = document.cookie;
  out.local = localStorage.getItem('k');
  out.session = sessionStorage.getItem('k');
  out.idb = (await indexedDB.databases()).map((d) => d.name).sort();
  out.caches = (await caches.keys()).sort();
  out.opfs = [];
  for await (const name of (await navigator.storage.getDirectory()).keys()) out.opfs.push(name);
  out.buckets = navigator.storageBuckets ? (await navigator.storageBuckets.keys()).sort() : 'none';
  out.swRegistrations = (await navigator.serviceWorker.getRegistrations()).length;
  out.swControlled = navigator.serviceWorker.controller !== null;
  out.swProbe = await (await fetch('/sw-probe', { cache: 'no-store' })).text();
  out.windowName = window.name;
  out.historyLength = history.length;
  out.notification = Notification.permission;
  out.geolocation = (await navigator.permissions.query({ name: 'geolocation' })).state;
  out.frame = await frameReport;
  return out;
}
function frameReport() {
  return new Promise((resolve) => {
    addEventListener('message', (e) => resolve(e.data), { once: true });
    setTimeout(() => resolve('no frame report'), 3000);
  });
}
function beacon(name, data) {
  return fetch('/beacon?' + name + '=' + encodeURIComponent(JSON.stringify(data)), { cache: 'no-store' });
}`;

const WRITER = (frameOrigin: string) =>
  page(
    `<iframe src="${frameOrigin}/frame-writer"></iframe>`,
    `<link rel="stylesheet" href="/cacheable.css">
     <script>${READ}
     const frame = frameReport();
     (async () => {
       const report = {};
       document.cookie = 'js=secret; max-age=3600; path=/';
       localStorage.setItem('k', 'secret');
       sessionStorage.setItem('k', 'secret');
       await new Promise((resolve, reject) => {
         const open = indexedDB.open('db', 1);
         open.onupgradeneeded = () => open.result.createObjectStore('s');
         open.onerror = () => reject(open.error);
         open.onsuccess = () => {
           const tx = open.result.transaction('s', 'readwrite');
           tx.objectStore('s').put('secret', 'k');
           tx.oncomplete = () => { open.result.close(); resolve(); };
         };
       });
       await (await caches.open('c')).put('/cached-entry', new Response('secret'));
       const opfs = await (await navigator.storage.getDirectory()).getFileHandle('f', { create: true });
       const writable = await opfs.createWritable();
       await writable.write('secret');
       await writable.close();
       if (navigator.storageBuckets) {
         const bucket = await navigator.storageBuckets.open('b');
         await (await bucket.caches.open('bc')).put('/bucket-entry', new Response('secret'));
       }
       try { await navigator.serviceWorker.register('/sw.js'); report.sw = 'registered'; }
       catch (e) { report.sw = 'refused: ' + e.name; }
       // A pristine register() from a fresh same-origin frame, should the page-level block
       // be bypassed: then the later layers (bypass, storage wipe) must still hold.
       try {
         const f = document.createElement('iframe');
         document.body.append(f);
         await f.contentWindow.navigator.serviceWorker.register('/sw.js');
         report.swViaFrame = 'registered';
       } catch (e) { report.swViaFrame = 'refused: ' + e.name; }
       window.name = 'secret';
       history.pushState({}, '', '?pushed');
       report.notificationRequest = await Notification.requestPermission();
       await new Promise((resolve) => navigator.geolocation.getCurrentPosition(resolve, resolve));
       // Fetched again within the same capture: must come from the HTTP cache.
       await fetch('/cacheable.css');
       report.readBack = await readAll(frame);
       await beacon('writer', report);
     })().catch((e) => beacon('error', String(e))).finally(() => { document.body.dataset.done = '1'; });
     </script>`,
  );

const READER = (frameOrigin: string) =>
  page(
    `<iframe src="${frameOrigin}/frame-reader"></iframe>`,
    `<link rel="stylesheet" href="/cacheable.css">
     <script>${READ}
     const frame = frameReport();
     (async () => {
       await beacon('reader', await readAll(frame));
     })().catch((e) => beacon('error', String(e))).finally(() => { document.body.dataset.done = '1'; });
     </script>`,
  );

/**
 * The iframe (another site, so an out-of-process frame with partitioned storage) stores what it
 * can and tries to register a service worker, then reports what it sees.
 */
const FRAME = (write: boolean) =>
  page(
    '',
    `<script>
       (async () => {
         let sw = 'not tried';
         if (${write}) {
           localStorage.setItem('fk', 'secret');
           sessionStorage.setItem('fk', 'secret');
           try { await navigator.serviceWorker.register('/sw.js'); sw = 'registered'; }
           catch (e) { sw = 'refused: ' + e.name; }
         }
         parent.postMessage({
           local: localStorage.getItem('fk'),
           session: sessionStorage.getItem('fk'),
           sw,
           swRegistrations: (await navigator.serviceWorker.getRegistrations()).length,
         }, '*');
       })();
     </script>`,
  );

const SERVICE_WORKER = `
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (e) => {
  if (new URL(e.request.url).pathname === '/sw-probe') e.respondWith(new Response('from service worker'));
});`;

describe('isolation between captures', () => {
  let site: FixtureSite;
  let frameSite: FixtureSite;
  let t: TestRenderer;
  const beacons: Array<{ name: string; data: unknown }> = [];
  const readerCookies: Array<string | undefined> = [];

  before(async () => {
    frameSite = await startSite(
      {
        '/frame-writer': FRAME(true),
        '/frame-reader': FRAME(false),
        '/sw.js': (_req: IncomingMessage, res: ServerResponse) => {
          res.writeHead(200, { 'content-type': 'text/javascript' }).end(SERVICE_WORKER);
        },
      },
      '127.0.0.2',
    );
    site = await startSite({
      '/writer': (_req: IncomingMessage, res: ServerResponse) => {
        res
          .writeHead(200, {
            'content-type': 'text/html',
            'set-cookie': 'srv=secret; Max-Age=3600; Path=/; HttpOnly',
          })
          .end(WRITER(frameSite.origin));
      },
      '/reader': (req: IncomingMessage, res: ServerResponse) => {
        readerCookies.push(req.headers.cookie);
        res.writeHead(200, { 'content-type': 'text/html' }).end(READER(frameSite.origin));
      },
      '/cacheable.css': (_req: IncomingMessage, res: ServerResponse) => {
        res
          .writeHead(200, { 'content-type': 'text/css', 'cache-control': 'public, max-age=3600' })
          .end('body { color: rgb(1, 2, 3); }');
      },
      '/sw.js': (_req: IncomingMessage, res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(SERVICE_WORKER);
      },
      '/sw-probe': (_req: IncomingMessage, res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('from network');
      },
      '/beacon': (req: IncomingMessage, res: ServerResponse) => {
        const query = new URL(req.url ?? '/', 'http://x').searchParams;
        for (const [name, value] of query) beacons.push({ name, data: JSON.parse(value) });
        res.writeHead(204).end();
      },
    });
    // One slot and one page, so that every capture reuses the same context and page.
    t = await startRenderer({ concurrency: 1, pagesPerSlot: 1 });
  });
  after(async () => {
    await t?.close();
    await site?.close();
    await frameSite?.close();
  });

  const take = (name: string): Record<string, unknown> => {
    const found = beacons.filter((b) => b.name === name || b.name === 'error');
    beacons.length = 0;
    assert.equal(found.length, 1, `one ${name} beacon: ${JSON.stringify(found)}`);
    assert.equal(found[0]?.name, name, `page error: ${JSON.stringify(found[0]?.data)}`);
    return found[0]?.data as Record<string, unknown>;
  };
  const capture = (path: string) =>
    t.render({ url: `${site.origin}${path}`, waitForSelector: 'body[data-done]' }, 20_000);

  it('a reader after a writer sees exactly what a reader sees before it', async () => {
    await capture('/reader');
    const baseline = take('reader');
    const cssBefore = site.hits.get('/cacheable.css') ?? 0;

    await capture('/writer');
    const writer = take('writer');
    // The writer really stored everything (so the reader's emptiness means something).
    const readBack = writer.readBack as Record<string, unknown>;
    assert.match(String(readBack.cookie), /js=secret/);
    assert.equal(readBack.local, 'secret');
    assert.equal(readBack.session, 'secret');
    assert.deepEqual(readBack.idb, ['db']);
    assert.deepEqual(readBack.caches, ['c']);
    assert.deepEqual(readBack.opfs, ['f']);
    assert.deepEqual(readBack.buckets, ['b']);
    assert.equal(readBack.windowName, 'secret');
    assert.deepEqual(readBack.frame, {
      local: 'secret',
      session: 'secret',
      sw: 'refused: SecurityError',
      swRegistrations: 0,
    });
    // Service workers cannot register at all; permission prompts are refused.
    assert.equal(writer.sw, 'refused: SecurityError');
    assert.equal(readBack.swRegistrations, 0);
    assert.equal(readBack.swProbe, 'from network');
    assert.equal(writer.notificationRequest, 'denied');
    // The stylesheet was cacheable: fetched once for the writer, the re-fetch hit the cache.
    assert.equal(site.hits.get('/cacheable.css'), cssBefore + 1);

    await capture('/reader');
    const reader = take('reader');
    assert.deepEqual(reader, baseline);
    assert.equal(reader.cookie, '');
    assert.equal(reader.local, null);
    assert.equal(reader.session, null);
    assert.deepEqual(reader.idb, []);
    assert.deepEqual(reader.caches, []);
    assert.deepEqual(reader.opfs, []);
    assert.deepEqual(reader.buckets, []);
    assert.equal(reader.swRegistrations, 0);
    assert.equal(reader.swControlled, false);
    assert.equal(reader.swProbe, 'from network');
    assert.equal(reader.windowName, '');
    assert.deepEqual(reader.frame, {
      local: null,
      session: null,
      sw: 'not tried',
      swRegistrations: 0,
    });
    // The server-set HttpOnly cookie is not sent either, and the HTTP cache is empty again.
    assert.deepEqual(readerCookies, [undefined, undefined]);
    assert.equal(site.hits.get('/cacheable.css'), cssBefore + 2);
  });

  it('register() from a fresh about:blank frame is refused too', async () => {
    // A page can reach a pristine ServiceWorkerContainer.prototype through a new frame; the
    // refusal is installed in every new document, that one included.
    await capture('/writer');
    const writer = take('writer');
    assert.equal(writer.swViaFrame, 'refused: SecurityError');
    await capture('/reader');
    assert.equal(take('reader').swRegistrations, 0);
  });
});
