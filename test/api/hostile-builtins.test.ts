/**
 * Pages that replace JavaScript's built-ins (docs/security.md, "Hostile pages"):
 * the service's helpers run where the page's replacements do not reach, every value is held to
 * its bound, and the value of `scripts` never comes back. The service runs as its own process,
 * so that a page able to end it would show here as a dead process and an unanswered /healthz;
 * its peak memory (VmHWM, reset before each test) shows whether a large value reached it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { nodeAccount } from '../helpers/accounts.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { type NodeProcess, startNode } from '../helpers/node-process.ts';

/** Characters of the page's huge string: 10 MB in the page, 60 MB as escaped JSON. */
const HUGE = 10_000_000;
/** More than a value of the sizes above would add to the service's peak memory. */
const MAX_PEAK_GROWTH_BYTES = 100 * 2 ** 20;

/**
 * Replaces what the service's helpers used to call in the page: some return a huge string of
 * control characters (six bytes each in a protocol message), the others throw.
 */
const REPLACE_BUILTINS = `<script>
  const huge = '\\u0001'.repeat(${HUGE});
  const boom = () => { throw new Error('replaced by the page'); };
  for (const name of ['max', 'min', 'ceil', 'floor', 'round']) Math[name] = () => huge;
  for (const name of ['slice', 'substring', 'substr', 'trim', 'replace', 'toLowerCase']) {
    String.prototype[name] = () => huge;
  }
  String.prototype.split = boom;
  JSON.stringify = () => huge;
  JSON.parse = boom;
  Array.prototype.join = () => huge;
  for (const name of ['map', 'filter', 'some', 'includes', 'forEach']) Array.prototype[name] = boom;
  Array.from = boom;
  Object.keys = boom;
  Object.entries = boom;
  Promise.all = boom;
  Promise.race = boom;
  Document.prototype.querySelector = boom;
  Element.prototype.getBoundingClientRect = () => ({ x: huge, y: huge, top: huge, left: huge,
    width: huge, height: huge, right: huge, bottom: huge });
  Object.defineProperty(Element.prototype, 'scrollHeight', { get: () => huge });
  Object.defineProperty(Document.prototype, 'title', { get: () => huge });
  window.setTimeout = () => 0;
  window.requestAnimationFrame = () => 0;
</script>`;

const TITLE = 'T'.repeat(5_000);

const BUILTINS_PAGE = page(
  `<div id="box" style="width:200px;height:100px;background:#c00"></div>
   <div style="height:1500px;background:linear-gradient(#fff,#00c)"></div>`,
  `<title>${TITLE}</title>
   <meta name="description" content="${'D '.repeat(3_000)}">
   ${REPLACE_BUILTINS}`,
);

/**
 * Only the string methods metadata's cut used to rely on, so the capture itself works; and a
 * URL of its own far longer than any a capture may ask for.
 */
const SLICES_PAGE = page(
  '<p>text</p>',
  `<title>${TITLE}</title>
   <meta property="og:title" content="${'O'.repeat(3_000)}">
   <script>
     const huge = '\\u0001'.repeat(${HUGE});
     history.replaceState(null, '', location.pathname + '?' + 'q'.repeat(500000));
     for (const name of ['slice', 'substring', 'substr', 'trim', 'replace']) {
       String.prototype[name] = () => huge;
     }
   </script>`,
);

/** The service process's peak resident memory since the last reset, in bytes. */
async function peakMemory(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
  assert.ok(kb, 'no VmHWM in /proc status');
  return Number(kb) * 1024;
}

/** Sets the process's peak resident memory to its current one (Linux: clear_refs 5). */
async function resetPeakMemory(pid: number): Promise<number> {
  await writeFile(`/proc/${pid}/clear_refs`, '5');
  return peakMemory(pid);
}

describe('pages that replace built-ins', () => {
  let site: FixtureSite;
  let node: NodeProcess;
  let plansDir: string;
  let key: string;
  let requests = 0;

  before(async () => {
    site = await startSite({
      '/small': page('<h1>small</h1>'),
      '/builtins': BUILTINS_PAGE,
      '/slices': SLICES_PAGE,
      // Replaces eval, which `scripts` runs through: the page must neither see nor stop it.
      '/eval-spy': page(
        '<p>x</p>',
        `<script>
           window.eval = (source) => { fetch('/spied?' + encodeURIComponent(source)); };
         </script>`,
      ),
      '/ran': (_req, res) => {
        res.writeHead(204).end();
      },
    });
    plansDir = await mkdtemp(path.join(tmpdir(), 'shotsmith-plans-'));
    const plans = path.join(plansDir, 'plans.json');
    await writeFile(plans, JSON.stringify({ free: { rate_per_minute: 1000 } }));
    node = await startNode('hostile-builtins', {
      EGRESS_ALLOWLIST: site.hostPort,
      PLANS_FILE: plans,
      RENDER_TIMEOUT_MS: '30000',
    });
    ({ key } = await nodeAccount(node, { key: true }));
    // Warm: the browser, the page pool and every kind of capture below, so that the peak
    // memory measured afterwards is the service's ordinary one.
    for (const body of [{}, { full_page: true }, { selector: 'h1' }, { metadata: true }]) {
      for (let attempt = 0; ; attempt++) {
        const res = await capture('/small', body);
        await res.body?.cancel();
        if (res.status === 201 || attempt === 2) break;
      }
    }
  });
  after(async () => {
    await node?.stop();
    await site?.close();
    if (plansDir) await rm(plansDir, { recursive: true, force: true });
  });

  const capture = (p: string, body: Record<string, unknown> = {}) =>
    node.fetch('/v1/screenshots', {
      method: 'POST',
      // A new URL each time: a cache hit would prove nothing about the renderer.
      json: { url: `${site.origin}${p}?n=${++requests}`, width: 400, height: 300, ...body },
      headers: { 'x-api-key': key },
    });

  /**
   * Runs `work` while polling /healthz every 200 ms; every probe must answer 200 (a slow one
   * is given 10 s: the machine may be busy, the service must not be gone).
   */
  async function whileHealthy<T>(work: () => Promise<T>): Promise<T> {
    const failures: string[] = [];
    let probes = 0;
    let done = false;
    const poll = (async () => {
      while (!done) {
        probes++;
        try {
          const res = await fetch(`${node.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
          await res.body?.cancel();
          if (res.status !== 200) failures.push(`status ${res.status}`);
        } catch (err) {
          failures.push(String(err));
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    try {
      return await work();
    } finally {
      done = true;
      await poll;
      assert.deepEqual(failures, [], `/healthz failed ${failures.length} of ${probes} times`);
      assert.ok(probes > 0);
    }
  }

  async function nextCaptureFine(): Promise<void> {
    const res = await capture('/small');
    assert.equal(res.status, 201, await res.text());
  }

  // First: a peak already raised by an earlier test's large value would hide this one's.
  it('the value of scripts never reaches the service, nor a huge error it throws', async () => {
    const peakBefore = await resetPeakMemory(node.pid);
    await whileHealthy(async () => {
      const huge = `'\\u0001'.repeat(${2 * HUGE})`;
      const value = await capture('/small', { scripts: huge });
      assert.equal(value.status, 201, (await value.text()).slice(0, 300));
      const awaited = await capture('/small', { scripts: `Promise.resolve(${huge})` });
      assert.equal(awaited.status, 201, (await awaited.text()).slice(0, 300));
      const thrown = await capture('/small', {
        scripts: `throw new Error('boom ' + ${huge})`,
      });
      const body = (await thrown.json()) as { code: string; error: string };
      assert.equal(thrown.status, 400);
      assert.equal(body.code, 'invalid_request');
      const prefix = 'scripts threw an error: boom ';
      assert.ok(body.error.startsWith(prefix), body.error.slice(0, 100));
      // Its first line, cut at BOUNDS.capture.scriptErrorMaxChars.
      assert.equal(body.error, `${prefix}${'\u0001'.repeat(300 - 'boom '.length)}`);
      await nextCaptureFine();
    });
    const growth = (await peakMemory(node.pid)) - peakBefore;
    console.log(`  the service's peak memory grew by ${(growth / 2 ** 20).toFixed(1)} MiB`);
    assert.ok(growth < MAX_PEAK_GROWTH_BYTES, `peak memory grew by ${growth} bytes`);
  });

  it('default, full-page, element and metadata captures answer 201 with the service up', async () => {
    const peakBefore = await resetPeakMemory(node.pid);
    await whileHealthy(async () => {
      for (const body of [{}, { full_page: true }, { selector: '#box' }, { metadata: true }]) {
        const res = await capture('/builtins', body);
        const text = await res.text();
        assert.equal(res.status, 201, `${JSON.stringify(body)}: ${text.slice(0, 300)}`);
        const answer = JSON.parse(text) as {
          width: number;
          height: number;
          metadata?: { title: string | null; description: string | null };
        };
        if ('selector' in body) assert.deepEqual([answer.width, answer.height], [200, 100]);
        if ('full_page' in body) assert.ok(answer.height > 1_500, `height ${answer.height}`);
        if ('metadata' in body) {
          assert.equal(answer.metadata?.title, 'T'.repeat(1_024));
          assert.equal(answer.metadata?.description?.length, 1_024);
        }
      }
      await nextCaptureFine();
    });
    const growth = (await peakMemory(node.pid)) - peakBefore;
    console.log(`  the service's peak memory grew by ${(growth / 2 ** 20).toFixed(1)} MiB`);
    assert.ok(growth < MAX_PEAK_GROWTH_BYTES, `peak memory grew by ${growth} bytes`);
  });

  it('a page that replaces eval neither sees nor stops the script', async () => {
    const res = await capture('/eval-spy', { scripts: "fetch('/ran')" });
    assert.equal(res.status, 201, (await res.text()).slice(0, 300));
    assert.equal(site.hits.get('/ran'), 1);
    assert.equal(site.hits.get('/spied'), undefined);
  });

  it('the waits and page actions work on such a page too', async () => {
    await whileHealthy(async () => {
      const res = await capture('/builtins', {
        wait_for_selector: '#box',
        styles: '#box { outline: 2px solid #0c0 }',
        scripts: 'document.body.dataset.ran = "yes"',
        click: '#box',
        scroll_into_view: '#box',
        block_ads: true,
        block_cookie_banners: true,
      });
      assert.equal(res.status, 201, (await res.text()).slice(0, 300));
      await nextCaptureFine();
    });
  });

  it('metadata stays at its cuts when the page replaces String.prototype.slice', async () => {
    const peakBefore = await resetPeakMemory(node.pid);
    await whileHealthy(async () => {
      const res = await capture('/slices', { metadata: true });
      const text = await res.text();
      assert.equal(res.status, 201, text.slice(0, 300));
      const { metadata } = JSON.parse(text) as {
        metadata: { title: string | null; og: { title: string | null }; final_url: string };
      };
      assert.equal(metadata.title, 'T'.repeat(1_024));
      assert.equal(metadata.og.title, 'O'.repeat(1_024));
      // The URL the document was loaded from, not the one the page made up.
      assert.equal(metadata.final_url, `${site.origin}/slices?n=${requests}`);
      await nextCaptureFine();
    });
    const growth = (await peakMemory(node.pid)) - peakBefore;
    assert.ok(growth < MAX_PEAK_GROWTH_BYTES, `peak memory grew by ${growth} bytes`);
  });
});
