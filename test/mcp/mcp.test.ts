/**
 * The MCP server (packages/mcp) as an MCP host runs it: a child process on stdio, driven by
 * the official SDK's Client and by raw JSON-RPC lines, against a real service (SQLite, real
 * Chromium) and a fixture site on loopback. The tools, their schemas (the service's own
 * descriptions), images decoded to their pixels, the downscaling rule, monitors on Pro, the
 * account's storage destinations (an S3-compatible server, bucket-fixtures.ts), and refusals
 * as tool errors.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PNG } from 'pngjs';
import { Shotsmith } from '../../packages/client/src/index.ts';
import { startBucket, type TestBucket } from '../client/bucket-fixtures.ts';
import {
  GEOLOCATION,
  LOCATED_PAGE,
  LOCATED_TITLE,
  LOCKED_PROXY_ID,
  type OperatorProxies,
  operatorProxies,
  PROXY_COUNTRY,
  PROXY_ID,
  PROXY_LISTING,
} from '../client/proxy-fixtures.ts';
import { account, type TestPlan } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import {
  assertNear,
  ColourBox,
  type FixtureSite,
  page,
  pngPixel,
  type Rgb,
  sleep,
  startSite,
} from '../helpers/fixtures.ts';
import { runProcess } from '../helpers/subprocess.ts';
import {
  type Content,
  call,
  facts,
  type Json,
  mcpHost,
  NODE_ARGS,
  pageBlock,
  ROOT,
  texts,
} from './host.ts';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const BACKGROUND: Rgb = [0, 128, 255];
const BOX: Rgb = [255, 0, 0];

function image(result: CallToolResult): PNG {
  const shown = result.content.find((c: Content) => c.type === 'image');
  assert.ok(shown && shown.type === 'image', JSON.stringify(result).slice(0, 500));
  assert.equal(shown.mimeType, 'image/png');
  const bytes = Buffer.from(shown.data, 'base64');
  assert.deepEqual(bytes.subarray(0, 8), PNG_SIGNATURE);
  return PNG.sync.read(bytes);
}

describe('MCP server over stdio against the service', () => {
  let t: TestApp;
  let site: FixtureSite;
  const box = new ColourBox();
  const host = mcpHost();
  let proxies: OperatorProxies;
  let bucket: TestBucket;
  before(async () => {
    site = await startSite({
      '/': page(
        `<div style="height:100vh;background:rgb(${BACKGROUND.join(',')})"><div id="box" style="position:absolute;left:40px;top:30px;width:300px;height:120px;background:rgb(${BOX.join(',')})"></div></div>`,
      ),
      '/watched': box.handler,
      '/located': LOCATED_PAGE,
    });
    proxies = await operatorProxies();
    bucket = await startBucket();
    t = await startApp({
      db: 'sqlite',
      env: {
        EGRESS_ALLOWLIST: `${site.hostPort},${bucket.hostPort}`,
        PROXIES_FILE: proxies.file,
      },
      plans: {
        free: { rate_per_minute: 1000, monthly_quota: 50 },
        pro: { rate_per_minute: 1000, max_monitors: 3 },
      },
    });
  });
  after(async () => {
    await host.close();
    await t?.close();
    await site?.close();
    await proxies?.close();
    await bucket?.close();
  });

  /** A new account with a key (accounts.ts), and the MCP server's environment for that key. */
  const withEnv = async (plan: TestPlan = 'free') => {
    const a = await account(t, { plan, key: true });
    return { ...a, env: { SHOTSMITH_API_KEY: a.key, SHOTSMITH_URL: t.url } };
  };

  const connect = (env: Record<string, string>) => host.connect(env);
  const used = async (client: Client) => facts(await call(client, 'get_usage')).used as number;

  it('lists the tools, with the capture options and the service descriptions', async () => {
    const client = await connect((await withEnv()).env);
    assert.equal(client.getServerVersion()?.name, 'shotsmith');
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), [
      'capture_element',
      'capture_screenshot',
      'create_monitor',
      'get_usage',
      'list_devices',
      'list_monitor_changes',
      'list_proxies',
      'list_storage_destinations',
    ]);
    const openapi = JSON.parse(await readFile(path.join(ROOT, 'openapi.json'), 'utf8'));
    const body = openapi.paths['/v1/screenshots'].post.requestBody.content['application/json']
      .schema.properties as Record<string, { description?: string }>;
    const capture = tools.find((tool) => tool.name === 'capture_screenshot');
    const props = capture?.inputSchema.properties as Record<string, { description?: string }>;
    const expected = Object.keys(body).filter(
      (name) => !['async', 'response_type', 'webhook_url'].includes(name),
    );
    assert.deepEqual(Object.keys(props).sort(), expected.sort());
    for (const name of expected) {
      const description = body[name]?.description;
      if (description === undefined) continue;
      assert.ok(props[name]?.description?.startsWith(description), `${name}'s description`);
    }
    assert.match(String(props.width?.description), /This tool's default, without a device: 1280/);
    const element = tools.find((tool) => tool.name === 'capture_element');
    assert.deepEqual(element?.inputSchema.required, ['selector']);
    const monitor = tools.find((tool) => tool.name === 'create_monitor');
    assert.ok(monitor?.inputSchema.properties?.every, 'create_monitor takes every');
  });

  it('captures a page as an image with its URL and facts; usage rises', async () => {
    const client = await connect((await withEnv()).env);
    const before = await used(client);
    const result = await call(client, 'capture_screenshot', {
      url: `${site.origin}/`,
      width: 400,
      height: 300,
    });
    assert.notEqual(result.isError, true, texts(result).join('\n'));
    const png = image(result);
    assert.deepEqual([png.width, png.height], [400, 300]);
    assertNear(pngPixel(png, 10, 10), BACKGROUND, 'the page background');
    assertNear(pngPixel(png, 100, 60), BOX, 'the box');
    const info = facts(result);
    assert.match(String(info.image_url), /^http:\/\/127\.0\.0\.1:\d+\/images\/.+\.png$/);
    assert.deepEqual([info.width, info.height, info.cached], [400, 300, false]);
    assert.equal(info.full_size_image_url, undefined, 'not downscaled');
    assert.deepEqual(info.quota, { used: before + 1, limit: 50 });
    assert.match(texts(result)[0] ?? '', /: 400 x 300 png\. Image URL: http/);
    assert.equal(await used(client), before + 1);
    // The hosted image is the one handed to the model.
    const hosted = Buffer.from(await (await fetch(String(info.image_url))).arrayBuffer());
    const shown = result.content.find((c: Content) => c.type === 'image');
    assert.equal(shown?.type === 'image' && shown.data, hosted.toString('base64'));
  });

  it('downscales a large capture through the service, naming the full-size URL', async () => {
    const client = await connect((await withEnv()).env);
    const before = await used(client);
    const result = await call(client, 'capture_screenshot', {
      url: `${site.origin}/`,
      width: 1800,
      height: 900,
    });
    assert.notEqual(result.isError, true, texts(result).join('\n'));
    const png = image(result);
    assert.equal(png.width, 1568);
    assert.ok(Math.abs(png.height - 784) <= 1, `height ${png.height}`);
    assertNear(pngPixel(png, 1500, 700), BACKGROUND, 'the background, scaled');
    const info = facts(result);
    assert.deepEqual([info.full_size_width, info.full_size_height], [1800, 900]);
    assert.equal(info.width, 1568);
    assert.notEqual(info.full_size_image_url, info.image_url);
    const full = await fetch(String(info.full_size_image_url));
    assert.equal(full.status, 200);
    assert.match(texts(result)[0] ?? '', /downscaled from 1800 x 900 \(full size: http/);
    assert.equal(await used(client), before + 2, 'the full-size and the model-sized capture');
  });

  it('captures one element, cropped to it', async () => {
    const client = await connect((await withEnv()).env);
    const result = await call(client, 'capture_element', {
      url: `${site.origin}/`,
      selector: '#box',
      width: 600,
      height: 400,
    });
    assert.notEqual(result.isError, true, texts(result).join('\n'));
    const png = image(result);
    assert.deepEqual([png.width, png.height], [300, 120]);
    assertNear(pngPixel(png, 150, 60), BOX, 'the element');
    const missing = await call(client, 'capture_element', { url: `${site.origin}/` });
    assert.equal(missing.isError, true);
    assert.match(texts(missing)[0] ?? '', /selector is required.*\[400 invalid_request\]/);
    const other = await call(client, 'capture_element', {
      url: `${site.origin}/`,
      selector: '#box',
      full_page: true,
    });
    assert.equal(other.isError, true);
    assert.match(texts(other)[0] ?? '', /does not take full_page/);
  });

  it('lists devices and reads usage', async () => {
    const client = await connect((await withEnv()).env);
    const devices = facts(await call(client, 'list_devices')) as unknown as Json[];
    const served = (await (await t.fetch('/v1/devices')).json()) as { data: Json[] };
    assert.deepEqual(
      devices.map((d) => d.name),
      served.data.map((d) => d.name),
    );
    assert.ok(devices.every((d) => typeof d.width === 'number' && !('user_agent' in d)));
    const usage = facts(await call(client, 'get_usage'));
    assert.deepEqual([usage.plan, usage.used, usage.limit], ['free', 0, 50]);
  });

  it('lists the proxies, and captures through one where the page is told it is (Pro)', async () => {
    const client = await connect((await withEnv('pro')).env);
    const { tools } = await client.listTools();
    const listing = tools.find((tool) => tool.name === 'list_proxies');
    assert.equal(listing?.annotations?.readOnlyHint, true);
    assert.deepEqual(facts(await call(client, 'list_proxies')), PROXY_LISTING.data);

    const url = `${site.origin}/located?mcp`;
    const result = await call(client, 'capture_screenshot', {
      url,
      width: 400,
      height: 300,
      proxy: PROXY_ID,
      geolocation: GEOLOCATION,
      wait_for_selector: '#located',
      metadata: true,
    });
    assert.notEqual(result.isError, true, texts(result).join('\n'));
    const png = image(result);
    assert.deepEqual([png.width, png.height], [400, 300]);
    assert.equal(pageBlock(result).get('metadata.title'), LOCATED_TITLE);
    assert.ok(proxies.carried(url), 'the page came through the proxy');
    const country = `${site.origin}/located?mcp-country`;
    const viaCountry = await call(client, 'capture_screenshot', {
      url: country,
      width: 400,
      height: 300,
      proxy_country: PROXY_COUNTRY,
    });
    assert.notEqual(viaCountry.isError, true, texts(viaCountry).join('\n'));
    assert.ok(proxies.carried(country), "the country's proxy carried it");

    // A failing proxy is a tool error with the service's words (they never quote the page).
    const locked = await call(client, 'capture_screenshot', {
      url: `${site.origin}/?locked`,
      proxy: LOCKED_PROXY_ID,
    });
    assert.equal(locked.isError, true);
    assert.deepEqual(texts(locked), ['proxy authentication failed [502 proxy_error]']);
    // On Free the listing reads, and the option is the plan's refusal.
    const free = await connect((await withEnv()).env);
    assert.deepEqual(facts(await call(free, 'list_proxies')), PROXY_LISTING.data);
    const plan = await call(free, 'capture_screenshot', { url, proxy_country: PROXY_COUNTRY });
    assert.equal(plan.isError, true);
    assert.match(texts(plan)[0] ?? '', /\[400 plan_restriction\]$/);
  });

  it("lists the account's storage destinations, and captures into one only (Pro)", async () => {
    const { key, env } = await withEnv('pro');
    const client = await connect(env);
    const { tools } = await client.listTools();
    const listing = tools.find((tool) => tool.name === 'list_storage_destinations');
    assert.equal(listing?.annotations?.readOnlyHint, true);
    assert.deepEqual(facts(await call(client, 'list_storage_destinations')), []);
    // Added as a user adds one (the tools only read them).
    const api = new Shotsmith({ apiKey: key, baseUrl: t.url });
    const made = await api.destinations.create(bucket.destination({ name: 'mcp', prefix: 'mcp' }));
    const listed = await call(client, 'list_storage_destinations');
    assert.deepEqual(facts(listed), [made]);
    assert.doesNotMatch(texts(listed).join('\n'), /S3RVER|access_key|secret/, 'no credentials');

    const result = await call(client, 'capture_screenshot', {
      url: `${site.origin}/?mcp-storage`,
      width: 320,
      height: 200,
      storage: { destination: made.id, hosted: false },
    });
    assert.notEqual(result.isError, true, texts(result).join('\n'));
    assert.match(texts(result)[0] ?? '', /into your bucket only \(storage\.hosted: false\)/);
    assert.equal(
      result.content.some((c: Content) => c.type === 'image'),
      false,
    );
    const objectKey = (facts(result).storage as { key: string }).key;
    assert.match(objectKey, /^mcp\/[^/]+\.png$/);
    assert.equal((await bucket.object(objectKey)).type, 'image/png');
    await api.destinations.delete(made.id);
  });

  it('answers refusals as tool errors with the service message and code', async () => {
    const { env } = await withEnv();
    const client = await connect(env);
    const bad = await call(client, 'capture_screenshot', { url: `${site.origin}/`, width: 'wide' });
    assert.equal(bad.isError, true);
    // invalid_request can quote the page (what scripts threw): its message is page text.
    assert.equal(
      texts(bad)[0],
      'The service refused the capture [400 invalid_request]. Its message can quote the page, so it is given as page text:',
    );
    assert.equal(pageBlock(bad).get('message'), 'width must be an integer');
    // Not in the tool's schema: a result sent elsewhere is never asked of the service.
    const elsewhere = await call(client, 'capture_screenshot', {
      url: `${site.origin}/`,
      async: true,
      webhook_url: 'https://hooks.example.com/x',
    });
    assert.equal(elsewhere.isError, true);
    assert.match(texts(elsewhere)[0] ?? '', /not a capture option here: async, webhook_url/);
    assert.equal(facts(await call(client, 'get_usage')).used, 0, 'nothing was captured');
    const plan = await call(client, 'capture_screenshot', {
      url: `${site.origin}/`,
      format: 'webp',
    });
    assert.equal(plan.isError, true);
    assert.match(texts(plan)[0] ?? '', /\[400 plan_restriction\]$/);
    const monitor = await call(client, 'create_monitor', { url: `${site.origin}/`, every: '1h' });
    assert.equal(monitor.isError, true);
    assert.match(
      texts(monitor)[0] ?? '',
      /monitors is not available on the free plan.*\[400 plan_restriction\]/,
    );
    const changes = await call(client, 'list_monitor_changes', { monitor_id: 'mon_nope' });
    assert.equal(changes.isError, true);
    assert.match(texts(changes)[0] ?? '', /\[\d{3} [a-z_]+\]$/);
    // A key the service does not know: every tool answers the 401 as a tool error.
    const stranger = await connect({ ...env, SHOTSMITH_API_KEY: `sk_live_${'A'.repeat(38)}` });
    const refused = await call(stranger, 'get_usage');
    assert.equal(refused.isError, true);
    assert.equal(texts(refused)[0], 'unauthorized [401 unauthorized]');
    // A spent month (its units taken through the service's store): the 402 and its reset.
    const spent = await withEnv();
    const month = new Date().toISOString().slice(0, 7);
    for (let i = 0; i < 50; i++)
      await t.deps.ctx.store.quota.reserve({ userId: spent.id, period: month }, { limit: 50 });
    const quota = await call(await connect(spent.env), 'capture_screenshot', {
      url: `${site.origin}/`,
    });
    assert.equal(quota.isError, true);
    assert.match(
      texts(quota)[0] ?? '',
      /^monthly quota exceeded \[402 quota_exceeded\] \(the quota resets \d{4}-\d{2}-01T00:00:00\.000Z\)$/,
    );
    // An unknown tool is the one protocol error.
    await assert.rejects(client.callTool({ name: 'nope', arguments: {} }), /unknown tool: nope/);
  });

  it('creates a monitor and lists its changes with diff URLs (Pro)', async () => {
    const { key, env } = await withEnv('pro');
    const client = await connect(env);
    const created = await call(client, 'create_monitor', {
      name: 'watched',
      url: `${site.origin}/watched`,
      options: { width: 400, height: 300 },
      every: '1h',
    });
    assert.notEqual(created.isError, true, texts(created).join('\n'));
    const monitor = facts(created);
    assert.match(String(monitor.id), /^mon_/);
    assert.equal(monitor.status, 'active');
    const id = String(monitor.id);

    // Runs are started with the client library (no tool runs a monitor now), then awaited.
    const api = new Shotsmith({ apiKey: key, baseUrl: t.url });
    const runNow = async () => {
      const { id: runId } = await api.monitors.run(id);
      const end = Date.now() + 60_000;
      for (;;) {
        const run = (await api.monitors.runs(id)).data.find((r) => r.id === runId);
        if (run && run.status !== 'running') return run;
        assert.ok(Date.now() < end, 'the run ended in time');
        await sleep(100);
      }
    };
    assert.equal((await runNow()).status, 'succeeded');
    const none = await call(client, 'list_monitor_changes', { monitor_id: id });
    assert.deepEqual(facts(none).changes, []);
    box.colour = 'rgb(255, 0, 0)';
    const changedRun = await runNow();
    assert.equal(changedRun.changed, true);
    assert.equal((await runNow()).changed, false, 'the same page again');

    const result = await call(client, 'list_monitor_changes', { monitor_id: id });
    assert.notEqual(result.isError, true, texts(result).join('\n'));
    assert.match(
      texts(result)[0] ?? '',
      /^1 change of monitor mon_\w+ in its 3 most recent runs\.$/,
    );
    const listed = facts(result) as {
      monitor: Json;
      changes: Array<{ run_id: string; diff_url: string; image_url: string }>;
    };
    assert.equal(listed.monitor.name, 'watched');
    assert.equal(listed.changes.length, 1);
    assert.equal(listed.changes[0]?.run_id, changedRun.id);
    for (const url of [listed.changes[0]?.diff_url, listed.changes[0]?.image_url]) {
      const res = await fetch(String(url));
      assert.equal(res.status, 200, String(url));
      assert.equal(res.headers.get('content-type'), 'image/png');
    }
    const bad = await call(client, 'list_monitor_changes', { monitor_id: id, limit: 0 });
    assert.equal(texts(bad)[0], 'limit must be an integer from 1 to 50 [400 invalid_request]');
  });

  it('speaks raw JSON-RPC lines on stdio: initialize, then a capture', async () => {
    const { env } = await withEnv();
    const child = spawn(process.execPath, NODE_ARGS, {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const transcript: string[] = [];
    const send = (message: Json) => {
      const line = JSON.stringify(message);
      transcript.push(`--> ${line}`);
      child.stdin.write(`${line}\n`);
    };
    const receive = async (): Promise<Json> => {
      const next = await lines.next();
      assert.ok(!next.done, 'the server answered');
      transcript.push(`<-- ${next.value}`);
      return JSON.parse(next.value) as Json;
    };
    try {
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw-line-test', version: '0' },
        },
      });
      const init = (await receive()) as { id: number; result: Json };
      assert.equal(init.id, 1);
      assert.equal(init.result.protocolVersion, '2025-06-18');
      assert.deepEqual(init.result.capabilities, { tools: {} });
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {
          name: 'capture_screenshot',
          arguments: { url: `${site.origin}/`, width: 320, height: 200 },
        },
      });
      const answer = (await receive()) as { id: number; result: CallToolResult };
      assert.equal(answer.id, 2);
      assert.equal(answer.result.isError, undefined);
      const png = image(answer.result);
      assert.deepEqual([png.width, png.height], [320, 200]);
      assertNear(pngPixel(png, 300, 190), BACKGROUND, 'the background');
      // Kept for the record (test-artifacts/ is not committed), the image's base64 cut short.
      await mkdir(path.join(ROOT, 'test-artifacts'), { recursive: true });
      await writeFile(
        path.join(ROOT, 'test-artifacts', 'mcp-tools-call.txt'),
        `${transcript.map((line) => line.replace(/("data":"[A-Za-z0-9+/]{60})[A-Za-z0-9+/=]+"/, '$1..."')).join('\n')}\n`,
      );
    } finally {
      child.kill();
    }
  });

  it('stops at once with a clear message when its configuration is missing or wrong', async () => {
    const run = (env: Record<string, string>) =>
      runProcess(process.execPath, NODE_ARGS, { env: { PATH: process.env.PATH ?? '', ...env } });
    const none = await run({});
    assert.equal(none.code, 2);
    assert.equal(none.stdout, '', 'nothing on the protocol stream');
    assert.match(none.stderr, /SHOTSMITH_API_KEY is not set/);
    assert.match(none.stderr, /SHOTSMITH_URL is not set/);
    const secret = `sk_live_${'s3cret'.repeat(4)}`;
    const wrong = await run({ SHOTSMITH_API_KEY: secret, SHOTSMITH_URL: 'ftp://shots.example' });
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /SHOTSMITH_API_KEY is not an API key/);
    assert.match(
      wrong.stderr,
      /SHOTSMITH_URL must be an http\(s\) URL, not "ftp:\/\/shots\.example"/,
    );
    assert.ok(!wrong.stderr.includes('s3cret'), 'the key is never printed');
  });
});
