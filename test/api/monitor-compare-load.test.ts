/**
 * A monitor's comparison never holds the node (docs/security.md, "Hostile pages"): while the
 * node's own comparer works on two 64-megapixel captures of noise (the MAX_IMAGE_PIXELS
 * default, the worst a full-page monitor can store), `/healthz` on the same node keeps
 * answering within 50 ms at the 99th percentile. Before the comparison moved to a worker, a
 * 20-megapixel one held the event loop for 8 s.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { BOUNDS } from '../../src/domain/bounds.ts';
import { startApp, type TestApp } from '../helpers/app.ts';

const SIDE = 8000;

/**
 * A PNG of SIDE x SIDE random pixels (each call new ones): 64 megapixels, the worst case for
 * pixelmatch (nearly every pixel differs, and each gets its anti-aliasing check). Stored, not
 * compressed: noise does not compress, and the test need not wait for zlib to find that out.
 */
const noise = () =>
  sharp(randomBytes(SIDE * SIDE * 3), { raw: { width: SIDE, height: SIDE, channels: 3 } })
    .png({ compressionLevel: 0, adaptiveFiltering: false })
    .toBuffer();

describe('a 64-megapixel monitor comparison', () => {
  let t: TestApp;

  before(async () => {
    t = await startApp({ db: 'sqlite' });
  });
  after(async () => {
    await t?.close();
  });

  it('runs off the event loop: /healthz answers within 50 ms (p99) throughout', async () => {
    const [first, second] = [await noise(), await noise()];
    const latencies: number[] = [];
    let comparing = true;
    const probes = (async () => {
      while (comparing) {
        const start = performance.now();
        const res = await t.fetch('/healthz');
        await res.body?.cancel();
        assert.equal(res.status, 200);
        latencies.push(performance.now() - start);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const started = performance.now();
    const result = await t.deps.monitors.comparer.compare(first, second, { threshold: 0.001 });
    const wallMs = performance.now() - started;
    comparing = false;
    await probes;

    assert.ok(result.changedFraction > 0.5, `noise against noise: ${result.changedFraction}`);
    assert.ok(result.diff, 'a diff is drawn');
    const meta = await sharp(result.diff).metadata();
    assert.ok(
      (meta.width ?? 0) * (meta.height ?? 0) <= BOUNDS.monitors.compareMaxPixels,
      'the diff is drawn at the pixel bound',
    );
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0;
    assert.ok(latencies.length >= 10, `probed ${latencies.length} times in ${wallMs} ms`);
    assert.ok(p99 < 50, `p99 ${p99.toFixed(1)} ms over ${latencies.length} probes`);
  });
});
