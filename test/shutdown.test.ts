/**
 * SIGTERM (docs/deployment.md, "Shutdown") on a real node process: requests that arrive after
 * the signal get the ordinary error body (`code` overloaded, Retry-After) or find the listener
 * closed; captures accepted before it finish (201), or, past SHUTDOWN_GRACE_SECONDS, are cut
 * off with 503; the process exits 0 and leaves no Chromium process, profile or temp
 * directory behind.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import {
  listProcesses,
  processesMentioning,
  processTree,
  readCmdline,
} from '../src/adapters/browser/process/proc.ts';
import { nodeAccount } from './helpers/accounts.ts';
import { type FixtureSite, page, sleep, startSite } from './helpers/fixtures.ts';
import { type NodeProcess, startNode } from './helpers/node-process.ts';

interface Leftovers {
  /** pid and start time of every process below the node (its Chromium among them). */
  processes: Array<{ pid: number; startTime: string }>;
  /** The node's Chromium profile directories and the temp directories they recorded. */
  dirs: string[];
}

/** What the node has running and on disk for Chromium, read while it runs. */
function chromiumOf(node: NodeProcess): Leftovers {
  const processes = processTree(node.pid)
    .filter((p) => p.pid !== node.pid)
    .map((p) => ({ pid: p.pid, startTime: p.startTime }));
  const root = path.join(node.dataDir, 'chromium');
  const dirs: string[] = [];
  for (const name of existsSync(root) ? readdirSync(root) : []) {
    const profile = path.join(root, name);
    dirs.push(profile);
    const recorded = path.join(profile, 'tmpdir');
    if (existsSync(recorded)) dirs.push(readFileSync(recorded, 'utf8').trim());
  }
  return { processes, dirs };
}

function assertNothingLeft(node: NodeProcess, before: Leftovers): void {
  assert.ok(before.processes.length > 0, 'the node ran Chromium');
  assert.ok(
    before.dirs.some((d) => d.includes('shotsmith-chromium-')),
    'a temp dir was seen',
  );
  // Zombies are gone processes: only the reaping of their exit status is left (to PID 1).
  const alive = new Map(
    listProcesses()
      .filter((p) => p.state !== 'Z')
      .map((p) => [p.pid, p.startTime]),
  );
  const left = before.processes
    .filter((p) => alive.get(p.pid) === p.startTime)
    .map((p) => `${p.pid}: ${readCmdline(p.pid)}`);
  assert.deepEqual(left, [], 'no process of the node is left');
  assert.deepEqual(processesMentioning(node.dataDir), [], 'no process names its data dir');
  for (const dir of before.dirs) assert.equal(existsSync(dir), false, `${dir} is gone`);
}

/**
 * A request sent by hand in two parts: its first header lines now (the connection is then in
 * the middle of a request, so a server that stops listening still reads it), the rest when
 * `finish()` is called. Resolves with everything the server sent.
 */
function splitRequest(port: number, start: string) {
  const socket = connect(port, '127.0.0.1');
  socket.write(start);
  let text = '';
  socket.on('data', (chunk) => {
    text += String(chunk);
  });
  const ended = new Promise<string>((resolve) => {
    socket.on('close', () => resolve(text));
    socket.on('error', () => {});
  });
  return { finish: (rest: string) => socket.write(rest), ended };
}

async function waitForOutput(node: NodeProcess, text: string, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  while (!node.output().includes(text)) {
    if (Date.now() > end) throw new Error(`no "${text}" in:\n${node.output()}`);
    await sleep(20);
  }
}

describe('SIGTERM under load', () => {
  let site: FixtureSite;
  const held = new Set<ServerResponse>();
  const nodes: NodeProcess[] = [];

  before(async () => {
    site = await startSite({
      '/slow': async (_req, res) => {
        await sleep(3_000);
        res.writeHead(200, { 'content-type': 'text/html' }).end(page('<h1>slow</h1>'));
      },
      '/never': (_req, res) => {
        held.add(res);
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write('<!doctype html><html><body><p>still loading');
      },
    });
  });
  after(async () => {
    for (const res of held) res.destroy();
    for (const node of nodes) await node.stop();
    await site?.close();
  });

  it('answers late requests with code and Retry-After, finishes the captures it took, exits 0 and leaves nothing', async () => {
    const node = await startNode('shutdown-load', {
      EGRESS_ALLOWLIST: site.hostPort,
      RENDER_CONCURRENCY: '2',
      RENDER_TIMEOUT_MS: '15000',
      LOG_LEVEL: 'info',
      // SHUTDOWN_GRACE_SECONDS at its default: the render deadline plus 10 s.
    });
    nodes.push(node);
    const keys = await Promise.all(
      [1, 2, 3, 4].map(async () => (await nodeAccount(node, { key: true })).key),
    );
    const capture = (key: string, url: string) =>
      node.fetch('/v1/screenshots', {
        method: 'POST',
        headers: { 'x-api-key': key },
        json: { url },
      });
    // A request begun before the signal and finished after it.
    const straddling = splitRequest(node.port, 'GET /v1/usage HTTP/1.1\r\nhost: 127.0.0.1\r\n');
    // Four captures of a 3 s page on two slots: two render, two wait.
    const accepted = keys.map((key, i) =>
      capture(key, `${site.origin}/slow?i=${i}`).then(async (res) => ({
        status: res.status,
        body: await res.text(),
      })),
    );
    for (let i = 0; i < 200 && (site.hits.get('/slow') ?? 0) < 2; i++) await sleep(50);
    await sleep(300);
    const chromium = chromiumOf(node);

    process.kill(node.pid, 'SIGTERM');
    await waitForOutput(node, 'shutting down');
    straddling.finish(`x-api-key: ${keys[1]}\r\n\r\n`);
    // A stream of new requests until the process is gone: captures and plain reads.
    const late: Array<{ status: number; code?: string; retryAfter: string | null } | 'refused'> =
      [];
    let exited = false;
    const exit = node.exited.then((code) => {
      exited = true;
      return code;
    });
    let n = 0;
    while (!exited) {
      const key = keys[n % keys.length] as string;
      const res =
        n % 2 === 0
          ? await capture(key, `${site.origin}/slow?late=${n}`).catch(() => null)
          : await node.fetch('/v1/usage', { headers: { 'x-api-key': key } }).catch(() => null);
      n++;
      if (res === null) late.push('refused');
      else {
        const body = (await res.json().catch(() => ({}))) as { code?: string };
        late.push({
          status: res.status,
          ...(body.code ? { code: body.code } : {}),
          retryAfter: res.headers.get('retry-after'),
        });
      }
      await sleep(50);
    }
    const code = await exit;
    // The request finished after the signal was read and refused like any overload.
    const straddled = await straddling.ended;
    assert.match(straddled, /^HTTP\/1\.1 503/, straddled);
    assert.match(straddled, /\r\nretry-after: \d+\r\n/i, straddled);
    assert.match(straddled, /"code":"overloaded"/, straddled);
    const answered = late.filter((r) => r !== 'refused');
    console.log(
      `late requests: ${late.length}, answered ${answered.length}, refused connections ${
        late.length - answered.length
      }`,
    );
    for (const r of answered) {
      assert.equal(r.status, 503, JSON.stringify(r));
      assert.equal(r.code, 'overloaded', JSON.stringify(r));
      assert.ok(Number(r.retryAfter) > 0, JSON.stringify(r));
    }
    // Every capture accepted before the signal finished.
    for (const outcome of await Promise.all(accepted)) {
      assert.equal(outcome.status, 201, outcome.body);
    }
    assert.equal(code, 0, node.output().slice(-3_000));
    assertNothingLeft(node, chromium);
  });

  it('cuts off what runs past SHUTDOWN_GRACE_SECONDS with 503, and still exits 0 leaving nothing', async () => {
    const node = await startNode('shutdown-grace', {
      EGRESS_ALLOWLIST: site.hostPort,
      RENDER_TIMEOUT_MS: '60000',
      SHUTDOWN_GRACE_SECONDS: '2',
      LOG_LEVEL: 'info',
    });
    nodes.push(node);
    const { key } = await nodeAccount(node, { key: true });
    const before = site.hits.get('/never') ?? 0;
    const never = node
      .fetch('/v1/screenshots', {
        method: 'POST',
        headers: { 'x-api-key': key },
        json: { url: `${site.origin}/never` },
      })
      .then(async (res) => ({
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        body: (await res.json()) as { code?: string },
      }));
    for (let i = 0; i < 200 && (site.hits.get('/never') ?? 0) === before; i++) await sleep(50);
    await sleep(300);
    const chromium = chromiumOf(node);
    const signalled = Date.now();
    process.kill(node.pid, 'SIGTERM');
    const cut = await never;
    const code = await node.exited;
    const took = Date.now() - signalled;
    console.log(`cut off after the grace; exited ${took} ms after SIGTERM`);
    assert.equal(cut.status, 503, JSON.stringify(cut));
    assert.equal(cut.body.code, 'overloaded');
    assert.ok(Number(cut.retryAfter) > 0);
    assert.equal(code, 0, node.output().slice(-3_000));
    // Long before the capture's own 60 s deadline.
    assert.ok(took < 30_000, `took ${took} ms`);
    assertNothingLeft(node, chromium);
    // The capture cut off gave its unit back (the ordinary failure path) before the exit.
    const db = new DatabaseSync(path.join(node.dataDir, 'shotsmith.sqlite'));
    try {
      const rows = db.prepare('SELECT used FROM usage_months').all() as Array<{ used: number }>;
      assert.deepEqual(
        rows.map((r) => Number(r.used)),
        [0],
      );
    } finally {
      db.close();
    }
  });
});
