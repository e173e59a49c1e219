/**
 * @shotsmith/mcp as it would be published: built with its own tsconfig beside a built
 * @shotsmith/client, packed by `npm pack` (offline, no scripts), and the packed bin run as an
 * MCP host runs it from an install made of the two tarballs, against a real service.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { newApiKey } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { runProcess } from '../helpers/subprocess.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const run = promisify(execFile);

interface Packed {
  filename: string;
  files: Array<{ path: string }>;
}

/** A package's folder without what a build or an install left in it. */
const copyPackage = (name: string, to: string) =>
  cp(path.join(ROOT, 'packages', name), to, {
    recursive: true,
    filter: (src) => !/[/\\](dist|node_modules)$/.test(src),
  });

async function pack(dir: string, out: string): Promise<Packed> {
  const { stdout } = await run(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', out],
    {
      cwd: dir,
      env: { ...process.env, npm_config_offline: 'true', npm_config_audit: 'false' },
    },
  );
  const [packed] = JSON.parse(stdout) as Packed[];
  assert.ok(packed);
  return packed;
}

describe('the @shotsmith/mcp package', () => {
  let dir: string;
  let t: TestApp;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'shotsmith-mcp-pack-'));
    t = await startApp({ db: 'sqlite' });
  });
  after(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('packs a bin and its built files, and the packed bin serves a host', async () => {
    // A build tree: both packages, the client reached by its package name as npm links it.
    const build = path.join(dir, 'build');
    await copyPackage('client', path.join(build, 'packages', 'client'));
    await copyPackage('mcp', path.join(build, 'packages', 'mcp'));
    await mkdir(path.join(build, 'node_modules', '@shotsmith'), { recursive: true });
    await symlink(
      path.join(build, 'packages', 'client'),
      path.join(build, 'node_modules', '@shotsmith', 'client'),
    );
    for (const name of ['@modelcontextprotocol', '@types', '.bin']) {
      await symlink(path.join(ROOT, 'node_modules', name), path.join(build, 'node_modules', name));
    }
    // Each package's own build script (the client's copies its generated schema.d.ts, which
    // its built declarations import).
    for (const name of ['client', 'mcp']) {
      await run('npm', ['run', 'build'], { cwd: path.join(build, 'packages', name) });
    }

    const out = path.join(dir, 'out');
    await mkdir(out);
    const client = await pack(path.join(build, 'packages', 'client'), out);
    const mcp = await pack(path.join(build, 'packages', 'mcp'), out);
    const files = mcp.files.map((f) => f.path).sort();
    for (const file of ['package.json', 'README.md', 'dist/main.js', 'dist/server.js']) {
      assert.ok(files.includes(file), `${file} is packed: ${files.join(', ')}`);
    }
    assert.ok(files.includes('dist/tool-schemas.js'), 'the generated schemas are built');
    assert.ok(!files.some((f) => f.startsWith('src/')), 'no source is packed');

    // An install made of the two tarballs (the SDK is the repository's own copy).
    const app = path.join(dir, 'app', 'node_modules');
    for (const [tarball, name] of [
      [mcp.filename, 'mcp'],
      [client.filename, 'client'],
    ] as const) {
      const to = path.join(app, '@shotsmith', name);
      await mkdir(to, { recursive: true });
      await run('tar', ['-xzf', path.join(out, tarball), '-C', to, '--strip-components=1']);
    }
    await symlink(
      path.join(ROOT, 'node_modules', '@modelcontextprotocol'),
      path.join(app, '@modelcontextprotocol'),
    );
    const manifest = JSON.parse(
      await readFile(path.join(app, '@shotsmith', 'mcp', 'package.json'), 'utf8'),
    ) as { bin: Record<string, string>; dependencies: Record<string, string> };
    assert.deepEqual(Object.keys(manifest.dependencies).sort(), [
      '@modelcontextprotocol/sdk',
      '@shotsmith/client',
    ]);
    const bin = path.join(app, '@shotsmith', 'mcp', manifest.bin['shotsmith-mcp'] ?? '');
    assert.match(await readFile(bin, 'utf8'), /^#!\/usr\/bin\/env node\n/);

    const missing = await runProcess(process.execPath, [bin], {
      env: { PATH: process.env.PATH ?? '' },
    });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /SHOTSMITH_API_KEY is not set/);

    const key = await newApiKey(t);
    const host = new Client({ name: 'shotsmith-pack-test', version: '0.0.0' });
    await host.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [bin],
        env: { PATH: process.env.PATH ?? '', SHOTSMITH_API_KEY: key, SHOTSMITH_URL: t.url },
        stderr: 'pipe',
      }),
    );
    try {
      assert.equal(host.getServerVersion()?.version, '0.1.0');
      assert.equal((await host.listTools()).tools.length, 8);
      const usage = (await host.callTool({ name: 'get_usage', arguments: {} })) as CallToolResult;
      assert.notEqual(usage.isError, true);
      const text = usage.content.find((c) => c.type === 'text');
      const body = JSON.parse(text?.type === 'text' ? text.text : '{}') as Record<string, unknown>;
      assert.deepEqual([body.plan, body.used], ['free', 0]);
      // Through the packed client's GET /v1/proxies: this service has none.
      const proxies = (await host.callTool({
        name: 'list_proxies',
        arguments: {},
      })) as CallToolResult;
      assert.deepEqual(proxies.content, [{ type: 'text', text: '[]' }]);
      // And GET /v1/storage-destinations: this account has none.
      const destinations = (await host.callTool({
        name: 'list_storage_destinations',
        arguments: {},
      })) as CallToolResult;
      assert.deepEqual(destinations.content, [{ type: 'text', text: '[]' }]);
    } finally {
      await host.close();
    }
  });
});
