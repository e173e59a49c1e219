/**
 * A monitor's comparison never holds the node (docs/security.md, "Hostile pages"): while the
 * node's own comparer works on two 64-megapixel captures of noise (the MAX_IMAGE_PIXELS
 * default, the worst a full-page monitor can store), `/healthz` on the same node keeps
 * answering within 50 ms at the 99th percentile (over what the machine itself adds at that
 * moment, probed just before: other test files may be running beside this one), and the
 * event loop stays mostly idle. Before the comparison moved to a worker, a
 * 20-megapixel one held the event loop for 8 s.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
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

const CONTROL_MS = 3_000;

/** /healthz probed every 20 ms until `work` settles: its value and each answer's time, ms. */
async function probe<T>(t: TestApp, work: Promise<T>): Promise<{ value: T; latencies: number[] }> {
  const latencies: number[] = [];
  let done = false;
  const probes = (async () => {
    while (!done) {
      const start = performance.now();
      const res = await t.fetch('/healthz');
      await res.body?.cancel();
      assert.equal(res.status, 200);
      latencies.push(performance.now() - start);
      await sleep(20);
    }
  })();
  try {
    return { value: await work, latencies };
  } finally {
    done = true;
    await probes;
  }
}

function percentile99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
}

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
    // The machine's own latency at this moment (other tests may be running beside this one):
    // the same probes for a few seconds before the comparison.
    const control = await probe(t, sleep(CONTROL_MS));
    const busy = performance.eventLoopUtilization();
    const started = performance.now();
    const during = await probe(
      t,
      t.deps.monitors.comparer.compare(first, second, { threshold: 0.001 }).then((result) => {
        assert.ok(result.changedFraction > 0.5, `noise against noise: ${result.changedFraction}`);
        assert.ok(result.diff, 'a diff is drawn');
        return result.diff;
      }),
    );
    const wallMs = performance.now() - started;
    const utilization = performance.eventLoopUtilization(busy).utilization;
    const meta = await sharp(during.value).metadata();
    assert.ok(
      (meta.width ?? 0) * (meta.height ?? 0) <= BOUNDS.monitors.compareMaxPixels,
      'the diff is drawn at the pixel bound',
    );
    assert.ok(
      during.latencies.length >= 10,
      `probed ${during.latencies.length} times in ${wallMs} ms`,
    );
    // Seconds of pixelmatch on this thread would keep the loop busy throughout.
    assert.ok(
      utilization < 0.5,
      `the event loop was busy ${Math.round(utilization * 100)} % of the time`,
    );
    const [p99, floor] = [percentile99(during.latencies), percentile99(control.latencies)];
    assert.ok(
      p99 < 50 + floor,
      `p99 ${p99.toFixed(1)} ms over ${during.latencies.length} probes (the machine's own: ${floor.toFixed(1)} ms)`,
    );
  });
});
