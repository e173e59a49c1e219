/**
 * The page at rest (docs/api.md, "The page at rest"): what a page animates in JavaScript
 * or inserts just after load is captured in its final state; a page that never rests is
 * captured at the bound with `not_at_rest`; what does not change the page (a far timer, a
 * polling interval) costs no wait. No assertion on time: only on what the image shows and on
 * which warnings come back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import {
  assertColor,
  decodeImage,
  rejectsWith,
  startRenderer,
  type TestRenderer,
} from './helpers.ts';

const GREEN = [0x22, 0xaa, 0x66];

/** A bar on a canvas grows to 300 px over `ms` by requestAnimationFrame (the Chart.js way). */
const canvasBar = (ms: number) =>
  page(
    '<canvas id="c" width="400" height="100" style="display:block"></canvas>',
    `<script>addEventListener('load', () => {
      const ctx = document.getElementById('c').getContext('2d');
      const start = performance.now();
      const draw = (t) => {
        const p = Math.min(1, (t - start) / ${ms});
        ctx.clearRect(0, 0, 400, 100);
        ctx.fillStyle = '#22aa66';
        ctx.fillRect(0, 0, 300 * p, 100);
        if (p < 1) requestAnimationFrame(draw);
      };
      requestAnimationFrame(draw);
    });</script>`,
  );

const codes = (warnings: { code: string }[]) => warnings.map((w) => w.code).sort();

describe('the page at rest', () => {
  let site: FixtureSite;
  let t: TestRenderer;
  /** A short bound, to see a page that never rests without waiting two seconds each time. */
  let short: TestRenderer;

  before(async () => {
    site = await startSite({
      '/still': page('<div style="width:200px;height:100px;background:#22aa66"></div>'),
      '/chart': canvasBar(700),
      '/late-popup': page(
        '<p>An article.</p>',
        `<script>addEventListener('load', () => setTimeout(() => {
          const d = document.createElement('div');
          d.style.cssText = 'position:fixed;left:0;top:0;width:400px;height:100px;background:#22aa66';
          document.body.append(d);
        }, 800));</script>`,
      ),
      '/counter': page(
        '<div id="n" style="font:40px monospace">0</div>' +
          '<div id="bar" style="height:50px;width:0;background:#22aa66"></div>',
        `<script>addEventListener('load', () => {
          let i = 0;
          const tick = () => {
            i += 10;
            document.getElementById('n').textContent = String(i);
            document.getElementById('bar').style.width = i + 'px';
            if (i < 300) setTimeout(tick, 15);
          };
          tick();
        });</script>`,
      ),
      '/forever': page(
        '<div style="width:200px;height:100px;background:#22aa66"></div>' +
          '<canvas id="c" width="400" height="100"></canvas>' +
          `<script>const ctx = document.getElementById('c').getContext('2d');
          const draw = (t) => { ctx.fillStyle = t % 2 ? '#000' : '#fff';
            ctx.fillRect(0, 0, 10, 10); requestAnimationFrame(draw); };
          requestAnimationFrame(draw);</script>`,
      ),
      '/quiet-timers': page(
        '<div style="width:200px;height:100px;background:#22aa66"></div>',
        `<script>setInterval(() => { window.polled = (window.polled || 0) + 1; }, 40);
        setTimeout(() => { document.body.append('much later'); }, 60000);</script>`,
      ),
      '/native': page(
        '<div id="out"></div>',
        `<script>document.title = [
          String(requestAnimationFrame), String(setTimeout), String(clearTimeout),
          String(Function.prototype.toString),
          requestAnimationFrame.name, setTimeout.length,
          Object.getOwnPropertySymbols(window).length].join('|');</script>`,
      ),
      '/hostile-answer': page(
        '<div style="width:200px;height:100px;background:#22aa66"></div>',
        `<script>const huge = 'x'.repeat(20000000);
        const f = () => ({ toString: () => huge, since: huge, due: new Proxy([], { get: () => huge }) });
        const raf = window.requestAnimationFrame;
        window.requestAnimationFrame = new Proxy(raf, { get: (t, p) => typeof p === 'symbol' ? f : Reflect.get(t, p) });</script>`,
      ),
      '/cleared-oddly': page(
        '<div style="width:200px;height:100px;background:#22aa66"></div>',
        `<script>clearInterval(setTimeout(() => {}, 1500));
        clearTimeout(String(setTimeout(() => {}, 1500)));</script>`,
      ),
      '/ticking': page(
        '<div id="t" style="font:40px monospace">10</div>',
        `<script>let n = 1000; const tick = () => { document.getElementById('t').textContent = String(n--);
          setTimeout(tick, 500); }; tick();</script>`,
      ),
      '/breaks-probe': page(
        '<div style="width:200px;height:100px;background:#22aa66"></div>',
        `<script>for (const s of Object.getOwnPropertySymbols(window)) {
          try { delete window[s]; } catch {} }
        window.requestAnimationFrame = null; window.setTimeout = () => 0;</script>`,
      ),
    });
    t = await startRenderer();
    short = await startRenderer({ settleMaxMs: 600, concurrency: 1 });
  });

  after(async () => {
    await t?.close();
    await short?.close();
    await site?.close();
  });

  it('a still page comes back with no warning', async () => {
    const result = await t.render({ url: `${site.origin}/still` });
    assert.deepEqual(result.warnings, []);
    assertColor(decodeImage(result.image), 100, 50, GREEN, 'the box');
  });

  it('a chart drawn by requestAnimationFrame is captured drawn to the end', async () => {
    const result = await t.render({ url: `${site.origin}/chart` });
    assert.deepEqual(result.warnings, []);
    const pixels = decodeImage(result.image);
    // The bar's far end: only the finished animation reaches it.
    assertColor(pixels, 295, 50, GREEN, 'the bar at its full length');
    assertColor(pixels, 310, 50, [255, 255, 255], 'past the bar');
  });

  it('content a timer inserts after load is in the image', async () => {
    const result = await t.render({ url: `${site.origin}/late-popup` });
    assert.deepEqual(result.warnings, []);
    assertColor(decodeImage(result.image), 200, 50, GREEN, 'the late pop-up');
  });

  it('a count driven by a chain of timers is captured at its end', async () => {
    const result = await t.render({ url: `${site.origin}/counter` });
    assert.deepEqual(result.warnings, []);
    assertColor(decodeImage(result.image), 295, 75, GREEN, 'the bar at 300 px');
  });

  it('a page that never rests is captured at the bound, with not_at_rest', async () => {
    const result = await short.render({ url: `${site.origin}/forever` });
    assert.deepEqual(codes(result.warnings), ['not_at_rest']);
    assert.match(
      result.warnings[0]?.message ?? '',
      /^the page was still changing after \d+ ms \(\d+ animation frames? asked for/,
    );
    assert.ok(result.settleMs >= 600, `settled for ${result.settleMs} ms`);
  });

  it('a far timer and a polling interval that changes nothing are not waited for', async () => {
    const result = await short.render({ url: `${site.origin}/quiet-timers` });
    assert.deepEqual(result.warnings, []);
    assert.ok(result.settleMs < 600, `settled for ${result.settleMs} ms`);
  });

  it('wait_until domcontentloaded skips the wait', async () => {
    const result = await short.render({
      url: `${site.origin}/forever`,
      waitUntil: 'domcontentloaded',
    });
    assert.equal(result.settleMs, 0);
    assert.deepEqual(result.warnings, []);
  });

  it('the probe is invisible to the page: native functions, no symbol on window', async () => {
    // The page's own reading of its functions, as its title.
    const result = await t.render({ url: `${site.origin}/native`, metadata: true });
    const [raf, timeout, clear, toText, name, length, symbols] = (
      result.metadata?.title ?? ''
    ).split('|');
    assert.match(raf ?? '', /^function requestAnimationFrame\(\) \{ \[native code\] \}$/);
    assert.match(timeout ?? '', /^function setTimeout\(\) \{ \[native code\] \}$/);
    assert.match(clear ?? '', /^function clearTimeout\(\) \{ \[native code\] \}$/);
    assert.match(toText ?? '', /^function toString\(\) \{ \[native code\] \}$/);
    assert.equal(name, 'requestAnimationFrame');
    assert.equal(length, '1');
    assert.equal(symbols, '0');
  });

  it('a page that breaks the probe still renders, without waiting', async () => {
    const result = await short.render({ url: `${site.origin}/breaks-probe` });
    assert.deepEqual(result.warnings, []);
    assertColor(decodeImage(result.image), 100, 50, GREEN, 'the box');
  });

  it('a page that answers in place of the probe with a huge value is not waited on', async () => {
    const result = await t.render({ url: `${site.origin}/hostile-answer` });
    assert.deepEqual(result.warnings, []);
    assertColor(decodeImage(result.image), 100, 50, GREEN, 'the box');
  });

  it('timers cleared by another clear call, or by their id as text, are not waited for', async () => {
    const result = await t.render({ url: `${site.origin}/cleared-oddly` });
    assert.deepEqual(result.warnings, []);
    assert.ok(result.settleMs < 1_400, `settled for ${result.settleMs} ms`);
  });

  it('a clock that ticks by a chain of timers rests between ticks', async () => {
    const result = await t.render({ url: `${site.origin}/ticking` });
    assert.deepEqual(result.warnings, []);
  });

  it('a deadline that passes while settling names the settle phase', async () => {
    const long = await startRenderer({ settleMaxMs: 30_000, concurrency: 1 });
    try {
      const err = await rejectsWith(
        long.render({ url: `${site.origin}/forever` }, 4_000),
        'render_timeout',
        /while waiting for the page to come to rest \(phase: settle\)/,
      );
      assert.equal((err.body as { phase?: string } | undefined)?.phase, 'settle');
    } finally {
      await long.close();
    }
  });
});
