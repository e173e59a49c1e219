/**
 * The getting-started page's commands and code, run as a reader would run them: its curl
 * commands in bash, its command line tool lines, its TypeScript snippet, against a real
 * service, with `http://localhost:8080` standing for the test's app and `https://example.com`
 * for a fixture page on loopback. A page that drifts from the service fails here.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { type FixtureSite, imageSize, page, startSite } from './helpers/fixtures.ts';
import { runProcess as run } from './helpers/subprocess.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

function blocks(markdown: string, lang: string): string[] {
  return [...markdown.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
    (m) => m[1] ?? '',
  );
}

describe('docs/getting-started.md, run', () => {
  let t: TestApp;
  let site: FixtureSite;
  let dir: string;
  before(async () => {
    site = await startSite({ '/': page('<h1 style="font:40px sans-serif">Example</h1>') });
    t = await startApp({ db: 'sqlite', env: { EGRESS_ALLOWLIST: site.hostPort } });
    dir = await mkdtemp(path.join(tmpdir(), 'shotsmith-docs-'));
  });
  after(async () => {
    await t?.close();
    await site?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('works from the account to the client snippet', async () => {
    const doc = await readFile(path.join(ROOT, 'docs', 'getting-started.md'), 'utf8');
    const local = (text: string) =>
      text
        .replaceAll('http://localhost:8080', t.url)
        .replaceAll('https://example.com', site.origin);
    const env = {
      PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      HOME: dir,
    };
    const shell = blocks(doc, 'sh').filter((b) => !b.includes('git clone'));
    assert.equal(shell.length, 3, 'account and key, capture, command line tool');

    // The account and the key: curl prints the two answers back to back, the key's last.
    const account = await run('bash', ['-euo', 'pipefail', '-c', local(shell[0] ?? '')], {
      cwd: dir,
      env,
    });
    assert.equal(account.code, 0, account.stderr);
    const created = JSON.parse(account.stdout.slice(account.stdout.lastIndexOf('{"id"'))) as {
      key: string;
      signing_secret: string;
    };
    assert.match(created.key, /^sk_live_/);
    assert.match(created.signing_secret, /^sig_live_/);
    const withKey = (text: string) => local(text).replace('sk_live_...', created.key);

    const capture = await run('bash', ['-euo', 'pipefail', '-c', withKey(shell[1] ?? '')], {
      cwd: dir,
      env,
    });
    assert.equal(capture.code, 0, capture.stderr);
    const shot = JSON.parse(capture.stdout) as { image_url: string; width: number };
    assert.equal(shot.width, 1280);
    assert.equal((await fetch(shot.image_url)).status, 200);

    // The tool's lines, with `npm run shotsmith --` as the bin it stands for.
    const cli = `node ${path.join(ROOT, 'packages', 'client', 'src', 'cli.ts')}`;
    const tool = await run(
      'bash',
      [
        '-euo',
        'pipefail',
        '-c',
        `export SHOTSMITH_API_KEY=${created.key}\n${local(shell[2] ?? '').replaceAll('npm run shotsmith --', cli)}`,
      ],
      { cwd: dir, env },
    );
    assert.equal(tool.code, 0, tool.stderr);
    assert.equal(imageSize(await readFile(path.join(dir, 'example.png'))).format, 'png');
    assert.match(tool.stdout, /of 100 used this month/);

    // The TypeScript snippet, importing the package's sources.
    const [snippet] = blocks(doc, 'ts');
    assert.ok(snippet);
    const file = path.join(dir, 'snippet.ts');
    await writeFile(
      file,
      `${local(snippet).replace("'@shotsmith/client'", `'${path.join(ROOT, 'packages', 'client', 'src', 'index.ts')}'`)}\nconsole.log(image_url);\n`,
    );
    const ts = await run(process.execPath, [file], {
      cwd: dir,
      env: { ...env, SHOTSMITH_API_KEY: created.key },
    });
    assert.equal(ts.code, 0, ts.stderr);
    assert.match(ts.stdout.trim(), /\/images\/[A-Za-z0-9_-]+\.png$/);
  });
});
