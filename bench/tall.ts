/**
 * Tall pages (docs/api.md, "Tall pages"): full-page captures of a 50,000 px page, 1280 px wide
 * (64 megapixels, MAX_IMAGE_PIXELS' default: four slices joined), against a 16,000 px page of
 * the same content (one piece, as before tall pages) in the same run, through the real
 * service: `node src/main.ts` spawned with one render slot, PNG, every capture a cache miss.
 * The two pages alternate in each round (their order swapped every round) and the time ratio
 * is the median of the rounds' ratios.
 *
 * Memory: the resident set (VmRSS in /proc/<pid>/status) of the service's Node process, the
 * process that joins (sharp runs in it; Chromium's processes are its children and are not
 * counted), read every 10 ms from just before the POST until its answer, so the whole capture
 * (the slices arriving, the join, the storage write) is inside the window. Its growth over the
 * reading before the POST, at its highest over the rounds and the process's first 50,000 px
 * capture (before the allocator holds any memory a join freed), is divided by the final
 * image's raw size (width x height x 4 bytes). Targets: the 50,000 px capture at most 4x the 16,000 px
 * one's time; the growth below 3x the raw size.
 *
 *   ./node_modules/.bin/node bench/tall.ts [--quick]
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { nodeAccount } from '../test/helpers/accounts.ts';
import { type FixtureSite, page, startSite } from '../test/helpers/fixtures.ts';
import { type NodeProcess, startNode } from '../test/helpers/node-process.ts';
import { median } from './stats.ts';

const WIDTH = 1280;
const TALL = 50_000;
const BASE = 16_000;
const ROUNDS = 4;
const QUICK_ROUNDS = 2;
export const TIME_TARGET = 4;
export const MEMORY_TARGET = 3;
const SAMPLE_MS = 10;

export interface TallCapture {
  height: number;
  ms: number;
  /** Peak VmRSS over the capture minus VmRSS just before it, bytes. */
  rssGrowthBytes: number;
  imageBytes: number;
}

export interface TallResult {
  rounds: number;
  tall: TallCapture[];
  base: TallCapture[];
  /** Median over rounds of the 50,000 px capture's time / the 16,000 px one's. */
  timeRatio: number;
  /** The process's first 50,000 px capture, made before the rounds (not timed). */
  first: TallCapture;
  /** Highest RSS growth of a 50,000 px capture, the first included / the raw size. */
  memoryRatio: number;
  /** The 50,000 px page of random pixels, the first tall capture of a fresh node. */
  noise: TallCapture;
  /** Its RSS growth / the raw size. */
  noiseMemoryRatio: number;
  rawBytes: number;
  timeTargetMet: boolean;
  memoryTargetMet: boolean;
}

/** A page `height` px tall of 40 px lines of text on tinted rows, as a long article is. */
function tallPage(height: number): string {
  let lines = '';
  for (let i = 0; i < height / 40; i++) {
    lines +=
      `<p style="background:hsl(${(i * 7) % 360},60%,92%)">${i}. The quick brown fox ` +
      `jumps over the lazy dog, line ${i} of a page ${height} px tall.</p>`;
  }
  return page(
    `<div style="height:${height}px;overflow:hidden">${lines}</div>`,
    '<style>html,body{margin:0}p{margin:0;height:40px;font:16px/40px sans-serif;' +
      'padding:0 20px}</style>',
  );
}

/**
 * The worst case for memory: a page `height` px tall of canvases of random pixels, nothing
 * for PNG to compress (its slices and its result are as large as the raw image, or larger).
 */
function noisePage(height: number): string {
  const canvases = '<canvas width="1280" height="5000" style="display:block"></canvas>'.repeat(
    Math.ceil(height / 5_000),
  );
  return page(
    canvases,
    `<style>html,body{margin:0}</style><script>addEventListener('DOMContentLoaded', () => {
      for (const c of document.querySelectorAll('canvas')) {
        const ctx = c.getContext('2d');
        const img = ctx.createImageData(1280, 100);
        for (let y = 0; y < 5000; y += 100) {
          for (let i = 0; i < img.data.length; i += 65536) {
            crypto.getRandomValues(img.data.subarray(i, i + 65536));
          }
          for (let i = 3; i < img.data.length; i += 4) img.data[i] = 255;
          ctx.putImageData(img, 0, y);
        }
      }
    });</script>`,
  );
}

/** The resident set of `pid` in bytes, from /proc (0 when it cannot be read). */
function rss(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
    return kb === undefined ? 0 : Number(kb) * 1024;
  } catch {
    return 0;
  }
}

/** A service node with one render slot, a key, and a timed capture of a page of the site. */
async function startService(
  site: FixtureSite,
  plans: string,
  name: string,
): Promise<{ node: NodeProcess; capture(path: string, height: number): Promise<TallCapture> }> {
  const node = await startNode(name, {
    EGRESS_ALLOWLIST: site.hostPort,
    RENDER_CONCURRENCY: '1',
    RENDER_TIMEOUT_MS: '180000',
    PLANS_FILE: plans,
    LOG_LEVEL: 'error',
  });
  try {
    const { key } = await nodeAccount(node, { key: true });
    let n = 0;
    const capture = async (where: string, height: number): Promise<TallCapture> => {
      const before = rss(node.pid);
      let peak = before;
      const timer = setInterval(() => {
        peak = Math.max(peak, rss(node.pid));
      }, SAMPLE_MS);
      const started = performance.now();
      try {
        const res = await node.fetch('/v1/screenshots', {
          method: 'POST',
          headers: { 'x-api-key': key },
          // A distinct query string: every capture renders.
          json: {
            url: `${site.origin}${where}?n=${n++}`,
            width: WIDTH,
            height: 800,
            full_page: true,
          },
        });
        const text = await res.text();
        const ms = performance.now() - started;
        peak = Math.max(peak, rss(node.pid));
        if (res.status !== 201) throw new Error(`${where}: HTTP ${res.status} ${text}`);
        const body = JSON.parse(text) as { height: number; width: number; image_url: string };
        if (body.height !== height || body.width !== WIDTH) {
          throw new Error(`${where}: ${body.width}x${body.height}, not ${WIDTH}x${height}`);
        }
        const image = await (await fetch(body.image_url)).arrayBuffer();
        return { height, ms, rssGrowthBytes: peak - before, imageBytes: image.byteLength };
      } finally {
        clearInterval(timer);
      }
    };
    return { node, capture };
  } catch (err) {
    await node.stop();
    throw err;
  }
}

export async function runTallBench(
  options: { quick?: boolean; log?: (line: string) => void } = {},
): Promise<TallResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const rounds = options.quick ? QUICK_ROUNDS : ROUNDS;
  const dir = await mkdtemp(path.join(tmpdir(), 'shotsmith-tallbench-'));
  let site: FixtureSite | undefined;
  let node: NodeProcess | undefined;
  try {
    site = await startSite({
      '/tall': tallPage(TALL),
      '/base': tallPage(BASE),
      '/noise': noisePage(TALL),
    });
    const plans = path.join(dir, 'plans.json');
    await writeFile(
      plans,
      JSON.stringify({ free: { monthly_quota: 1_000_000, rate_per_minute: 10_000 } }),
    );
    const text = await startService(site, plans, 'tallbench');
    node = text.node;
    log('tall: warming up');
    await text.capture('/base', BASE);
    // The process's first tall capture: its memory growth counts (below), the allocator holds
    // none of a join's memory yet; its time does not.
    const first = await text.capture('/tall', TALL);
    const tall: TallCapture[] = [];
    const base: TallCapture[] = [];
    const ratios: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? [BASE, TALL] : [TALL, BASE];
      const got: Record<number, TallCapture> = {};
      for (const height of order) {
        got[height] = await text.capture(height === TALL ? '/tall' : '/base', height);
      }
      const t = got[TALL] as TallCapture;
      const b = got[BASE] as TallCapture;
      tall.push(t);
      base.push(b);
      ratios.push(t.ms / b.ms);
      log(
        `tall: round ${r + 1}/${rounds}: ${TALL} px ${Math.round(t.ms)} ms ` +
          `(rss +${Math.round(t.rssGrowthBytes / 2 ** 20)} MiB), ${BASE} px ` +
          `${Math.round(b.ms)} ms (rss +${Math.round(b.rssGrowthBytes / 2 ** 20)} MiB)`,
      );
    }
    await node.stop();
    node = undefined;
    // The worst case on a fresh node, so that no earlier capture's memory is reused.
    const noisy = await startService(site, plans, 'tallbench-noise');
    node = noisy.node;
    await noisy.capture('/base', BASE);
    const noise = await noisy.capture('/noise', TALL);
    log(
      `tall: noise ${TALL} px ${Math.round(noise.ms)} ms ` +
        `(rss +${Math.round(noise.rssGrowthBytes / 2 ** 20)} MiB)`,
    );
    const rawBytes = WIDTH * TALL * 4;
    const timeRatio = median(ratios);
    const peakGrowth = Math.max(first.rssGrowthBytes, ...tall.map((c) => c.rssGrowthBytes));
    const memoryRatio = peakGrowth / rawBytes;
    const noiseMemoryRatio = noise.rssGrowthBytes / rawBytes;
    return {
      rounds,
      first,
      tall,
      base,
      noise,
      timeRatio,
      memoryRatio,
      noiseMemoryRatio,
      rawBytes,
      timeTargetMet: timeRatio <= TIME_TARGET,
      memoryTargetMet: memoryRatio < MEMORY_TARGET && noiseMemoryRatio < MEMORY_TARGET,
    };
  } finally {
    await node?.stop();
    await site?.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const result = await runTallBench({ quick: process.argv.includes('--quick') });
  console.log(JSON.stringify(result, null, 2));
}
