/**
 * `npm run docs:monitor-images`: the images of docs/monitors.md, made by the service itself.
 * It serves docs/examples/monitor-status.html on loopback (the "ok" state, its #updated line
 * holding the time of each request), starts the app in-process (embedded mode, a fresh data
 * directory) with a Pro account, creates the monitor the page shows through the client
 * library, runs it, turns the page to its "degraded" state, runs it again, and writes the
 * first run's image, the second's and the second's diff, downloaded from the service's own
 * URLs, to docs/images/monitor-before.png, monitor-after.png and monitor-diff.png, and the
 * two runs' facts to docs/images/monitor.json. test/docs-site.test.ts makes them again and
 * checks the change is still found, with images of the committed sizes.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type MonitorRun, Shotsmith } from '../packages/client/src/index.ts';
import { type FixtureSite, imageSize, startSite } from '../test/helpers/fixtures.ts';
import { exampleApp } from './docs-gallery.ts';

const DOCS = path.resolve(import.meta.dirname, '..', 'docs');

/** The monitor docs/monitors.md creates, with `https://status.example/` for the local page. */
export const DOCUMENTED_MONITOR = {
  name: 'status page',
  url: 'https://status.example/',
  options: { width: 800, height: 420 },
  every: '1h',
  threshold: 0.001,
  ignore_selectors: ['#updated'],
} as const;

export interface MonitorImages {
  before: Buffer;
  after: Buffer;
  diff: Buffer;
  /** The two runs as GET /v1/monitors/{id}/runs answered them, oldest first. */
  runs: [MonitorRun, MonitorRun];
}

/** The status page, served in whichever state `state()` says, stamped with the time. */
async function startStatusSite(state: () => 'ok' | 'degraded'): Promise<FixtureSite> {
  const html = await readFile(path.join(DOCS, 'examples', 'monitor-status.html'), 'utf8');
  return startSite({
    '/': (_req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          html
            .replace('<body class="ok">', `<body class="${state()}">`)
            .replace('{{updated}}', new Date().toISOString()),
        );
    },
  });
}

/** Reads the monitor's runs until `runId` has ended; a failed run is an error. */
async function ended(api: Shotsmith, id: string, runId: string): Promise<MonitorRun> {
  const end = Date.now() + 120_000;
  for (;;) {
    const run = (await api.monitors.runs(id)).data.find((r) => r.id === runId);
    if (run === undefined) throw new Error(`run ${runId} is not listed`);
    if (run.status === 'failed') throw new Error(`run ${runId} failed: ${run.error}`);
    if (run.status === 'succeeded') return run;
    if (Date.now() > end) throw new Error(`run ${runId} did not end in 2 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A PNG from one of the service's URLs, checked to be one. */
async function png(url: string | null | undefined): Promise<Buffer> {
  if (!url) throw new Error('the run has no such image');
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  if (imageSize(bytes).format !== 'png') throw new Error(`${url} is not a PNG`);
  return bytes;
}

/** Runs the documented monitor against the status page, before and after it changes. */
export async function makeMonitorImages(): Promise<MonitorImages> {
  let state: 'ok' | 'degraded' = 'ok';
  const site = await startStatusSite(() => state);
  const { t, key } = await exampleApp(site);
  try {
    const api = new Shotsmith({ apiKey: key, baseUrl: t.url });
    const monitor = await api.monitors.create({
      ...DOCUMENTED_MONITOR,
      options: { ...DOCUMENTED_MONITOR.options },
      ignore_selectors: [...DOCUMENTED_MONITOR.ignore_selectors],
      url: `${site.origin}/`,
    });
    const first = await ended(api, monitor.id, (await api.monitors.run(monitor.id)).id);
    state = 'degraded';
    const second = await ended(api, monitor.id, (await api.monitors.run(monitor.id)).id);
    if (first.changed !== false || second.changed !== true) {
      throw new Error(`expected no change then a change: ${JSON.stringify([first, second])}`);
    }
    return {
      before: await png(first.image_url),
      after: await png(second.image_url),
      diff: await png(second.diff_url),
      runs: [first, second],
    };
  } finally {
    await t.close();
    await site.close();
  }
}

if (import.meta.main) {
  const made = await makeMonitorImages();
  const images = path.join(DOCS, 'images');
  for (const name of ['before', 'after', 'diff'] as const) {
    await writeFile(path.join(images, `monitor-${name}.png`), made[name]);
  }
  const facts = {
    ...imageSize(made.before),
    changed_fraction: made.runs[1].changed_fraction,
    threshold: DOCUMENTED_MONITOR.threshold,
  };
  await writeFile(path.join(images, 'monitor.json'), `${JSON.stringify(facts, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(facts)}\n`);
}
