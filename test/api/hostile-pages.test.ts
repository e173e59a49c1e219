/**
 * Pages that eat memory or CPU (docs/security.md): the capture ends in a 5xx that costs no quota,
 * and the service and the next capture stay healthy. The renderer bound is set low here
 * (RENDERER_MAX_MEMORY_MB=300); the pages stop by themselves at 2 GiB, so that even without a
 * bound they never take the machine down, and then spin (a service without the bound answers
 * 504 after the deadline instead of the 500 that names the memory).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { processTree } from '../../src/adapters/browser/process/proc.ts';
import { newApiKey } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';

const RENDER_TIMEOUT_MS = 30_000;

const ARRAY_BUFFERS = page(`<script>
  const keep = [];
  for (let i = 0; i < 64; i++) keep.push(new Uint8Array(32 << 20).fill(1));
  for (;;) {}
</script>`);

const JS_ARRAYS = page(`<script>
  const keep = [];
  for (let i = 0; i < 256; i++) keep.push(new Array(1 << 20).fill(i + 0.5));
  for (;;) {}
</script>`);

/** Eight workers spin; the page never finishes loading (its image never answers). */
const SPINNING_WORKERS = page(`<script>
  const url = URL.createObjectURL(new Blob(['for (;;) {}'], { type: 'text/javascript' }));
  for (let i = 0; i < 8; i++) new Worker(url);
</script><img src="/never.png">`);

/** CPU seconds (user + system) used so far by each of this process's children (Chromium). */
function childCpu(): Map<number, number> {
  const ticks = 100; // USER_HZ on Linux
  const out = new Map<number, number>();
  for (const p of processTree(process.pid)) {
    if (p.pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${p.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(p.pid, (Number(fields[11]) + Number(fields[12])) / ticks);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU seconds Chromium's processes used over `ms` (processes that ended meanwhile: 0). */
async function chromiumCpuOver(ms: number): Promise<number> {
  const before = childCpu();
  await new Promise((resolve) => setTimeout(resolve, ms));
  let used = 0;
  for (const [pid, seconds] of childCpu()) {
    used += seconds - (before.get(pid) ?? 0);
  }
  return used;
}

describe('hostile pages', () => {
  let t: TestApp;
  let site: FixtureSite;
  let key: string;
  const hanging = new Set<() => void>();
  let requests = 0;

  before(async () => {
    site = await startSite({
      '/small': page('<h1>small</h1>'),
      '/array-buffers': ARRAY_BUFFERS,
      '/js-arrays': JS_ARRAYS,
      '/workers': SPINNING_WORKERS,
      '/never.png': (_req, res) =>
        new Promise<void>((resolve) => {
          hanging.add(resolve);
          res.on('close', resolve);
        }),
    });
    t = await startApp({
      db: 'sqlite',
      env: {
        EGRESS_ALLOWLIST: site.hostPort,
        RENDER_CONCURRENCY: '1',
        RENDER_TIMEOUT_MS: String(RENDER_TIMEOUT_MS),
        RENDERER_MAX_MEMORY_MB: '300',
      },
      plans: { free: { rate_per_minute: 1000 } },
    });
    key = await newApiKey(t);
    // Browser started and pages prepared before the first timed test (a cold start on a busy
    // machine may miss one deadline).
    for (let attempt = 0; ; attempt++) {
      const res = await capture('/small');
      if (res.status === 201 || attempt === 2) break;
    }
  });
  after(async () => {
    for (const release of hanging) release();
    await t?.close();
    await site?.close();
  });

  const capture = (path: string) =>
    t.fetch('/v1/screenshots', {
      method: 'POST',
      json: { url: `${site.origin}${path}?n=${++requests}`, width: 400, height: 300 },
      headers: { 'x-api-key': key },
    });
  const used = async () =>
    (
      (await (await t.fetch('/v1/usage', { headers: { 'x-api-key': key } })).json()) as {
        used: number;
      }
    ).used;

  async function nextCaptureHealthy(): Promise<number> {
    // A new URL each time: a cache hit would prove nothing about the renderer.
    const started = Date.now();
    const res = await capture('/small');
    assert.equal(res.status, 201, await res.text());
    return Date.now() - started;
  }

  for (const [name, path] of [
    ['ArrayBuffers allocated without end', '/array-buffers'],
    ['JS arrays grown without end', '/js-arrays'],
  ] as const) {
    it(`${name}: 500 naming the memory, no quota spent, next capture fine`, async () => {
      const quotaBefore = await used();
      const started = Date.now();
      const res = await capture(path);
      const body = (await res.json()) as { error: string; code: string };
      const took = Date.now() - started;
      console.log(`  ${path}: ${res.status} ${JSON.stringify(body)} in ${took} ms`);
      assert.equal(res.status, 500);
      assert.equal(body.code, 'internal_error');
      assert.match(body.error, /too much memory/);
      // Killed on the way up, long before the deadline.
      assert.ok(took < RENDER_TIMEOUT_MS, `took ${took} ms`);
      assert.equal(await used(), quotaBefore);
      const next = await nextCaptureHealthy();
      console.log(`  next capture: ${next} ms`);
      assert.equal(await used(), quotaBefore + 1);
      assert.ok(t.logs.some((line) => line.includes('a renderer used too much memory; killed it')));
    });
  }

  it('eight spinning workers: 504 at the deadline, workers gone, next capture fast', async () => {
    const quotaBefore = await used();
    const res = await capture('/workers');
    const body = (await res.json()) as { code: string };
    assert.equal(res.status, 504, JSON.stringify(body));
    assert.equal(body.code, 'render_timeout');
    assert.equal(await used(), quotaBefore);
    // The failed capture's context is closed, its renderer and workers with it: within a few
    // seconds Chromium is idle again (eight live spinning workers burn far more than this).
    let cpu = Number.POSITIVE_INFINITY;
    for (let waited = 0; waited < 15_000 && cpu >= 0.6; waited += 3_000) {
      cpu = await chromiumCpuOver(3_000);
      console.log(`  chromium CPU over 3 s, ${waited / 1000} s after the 504: ${cpu.toFixed(2)} s`);
    }
    assert.ok(cpu < 0.6, `chromium still burns CPU: ${cpu} s in 3 s`);
    const next = await nextCaptureHealthy();
    console.log(`  next capture: ${next} ms`);
    assert.ok(next < 10_000, `next capture took ${next} ms`);
  });
});
