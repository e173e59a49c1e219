/**
 * `shotsmith monitor ...` as a subprocess against a real running service and real Chromium:
 * create (from a URL with capture options, and from an HTML file), list, get, run --wait,
 * runs showing the changed run after the fixture page changed colour (and --changed keeping
 * only it), pause, resume, delete, `help monitor`, and what is wrong with a bad command line.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { account, type TestPlan } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { type Ran, runProcess } from '../helpers/subprocess.ts';

const CLI = path.resolve(import.meta.dirname, '..', '..', 'packages', 'client', 'src', 'cli.ts');

const cli = (args: string[], env: Record<string, string>): Promise<Ran> =>
  runProcess(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });

const MON = /mon_[0-9A-Za-z]{24}/;
const RUN = /run_[0-9A-Za-z]{24}/;

describe('shotsmith monitor', () => {
  let t: TestApp;
  let site: FixtureSite;
  let dir: string;
  // The status light of the fixture page, which the test turns from green to red.
  let light = '#1a7f37';
  before(async () => {
    site = await startSite({
      '/status': (_req, res) => {
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            page(
              `<h1 style="font:24px sans-serif">api</h1><div style="width:200px;height:150px;background:${light}"></div>`,
            ),
          );
      },
    });
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: site.hostPort },
      plans: { pro: { rate_per_minute: 1000 } },
    });
    dir = await mkdtemp(path.join(tmpdir(), 'shotsmith-cli-monitor-'));
  });
  after(async () => {
    await t?.close();
    await site?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The CLI's environment for a new account's key (accounts.ts). */
  const envFor = async (plan: TestPlan = 'pro') => {
    const { key } = await account(t, { plan, key: true });
    return { SHOTSMITH_API_KEY: key, SHOTSMITH_URL: t.url };
  };
  const ok = async (args: string[], env: Record<string, string>): Promise<Ran> => {
    const ran = await cli(args, env);
    assert.equal(ran.code, 0, `${args.join(' ')}: ${ran.stderr}`);
    return ran;
  };

  it('creates, lists, runs with --wait, and shows the changed run', async () => {
    const env = await envFor();
    light = '#1a7f37';
    const url = `${site.origin}/status`;
    const created = await ok(
      [
        'monitor',
        'create',
        url,
        '--every',
        '7d',
        '--name',
        'status page',
        '--threshold',
        '0.01',
        '--ignore-selector',
        '#clock',
        '--ignore-selector',
        '.ad',
        '--width',
        '400',
        '--height',
        '300',
      ],
      env,
    );
    const id = created.stdout.match(MON)?.[0] ?? '';
    assert.match(created.stdout, new RegExp(`^id: +${id}\n`));
    for (const line of [
      'name:        status page',
      `target:      ${url}`,
      'status:      active',
      'every:       7d',
      'threshold:   0.01 (1.00% of pixels)',
      'ignore:      #clock, .ad',
      'options:     {"width":400,"height":300}',
      'last run:    -',
    ]) {
      assert.ok(created.stdout.includes(`${line}\n`), `${line} in\n${created.stdout}`);
    }

    const listed = await ok(['monitor', 'list'], env);
    const [header, row, ...more] = listed.stdout.trimEnd().split('\n');
    assert.match(header ?? '', /^ID +STATUS +EVERY +LAST RUN +LAST CHANGE +NAME +TARGET$/);
    assert.match(row ?? '', new RegExp(`^${id} +active +7d +- +- +status page +${url}$`));
    assert.deepEqual(more, []);

    const first = await ok(['monitor', 'run', id, '--wait'], env);
    assert.match(first.stdout, new RegExp(`^run ${RUN.source} succeeded: no change \\(`));
    assert.match(first.stdout, /^image: http:\/\/127\.0\.0\.1:\d+\/images\/\S+\.png$/m);
    assert.doesNotMatch(first.stdout, /^diff:/m);
    assert.match(first.stderr, new RegExp(`^running ${RUN.source}$`, 'm'), 'a progress line');

    light = '#cf222e';
    const second = await ok(['monitor', 'run', id, '--wait', '--json'], env);
    const run = JSON.parse(second.stdout) as {
      id: string;
      status: string;
      changed: boolean;
      changed_fraction: number;
      diff_url: string;
    };
    assert.deepEqual([run.status, run.changed], ['succeeded', true]);
    assert.ok(run.changed_fraction > 0.2 && run.changed_fraction < 0.3, `${run.changed_fraction}`);
    assert.equal((await fetch(run.diff_url)).status, 200);

    const runs = await ok(['monitor', 'runs', id], env);
    const lines = runs.stdout.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^RUN +AT +STATUS +CHANGED +PIXELS +IMAGE \/ DIFF \/ ERROR$/);
    assert.match(
      lines[1] ?? '',
      new RegExp(`^${run.id} +\\S+Z +succeeded +yes +2\\d\\.\\d\\d% +http\\S+\\.png http\\S+$`),
    );
    assert.match(lines[2] ?? '', /^run_\w+ +\S+Z +succeeded +no +0% +http\S+\.png$/);
    assert.equal(lines.length, 3);

    const changed = await ok(['monitor', 'runs', id, '--changed', '--json'], env);
    assert.deepEqual(
      (JSON.parse(changed.stdout) as { data: Array<{ id: string }> }).data.map((r) => r.id),
      [run.id],
    );
    const got = await ok(['monitor', 'get', id], env);
    assert.match(got.stdout, /^last change: \d{4}-\d\d-\d\dT\S+Z$/m);
    const relisted = await ok(['monitor', 'list'], env);
    assert.match(relisted.stdout, new RegExp(`^${id} +active +7d +\\S+Z +\\S+Z +status page`, 'm'));
  });

  it('creates from an HTML file, pauses, resumes and deletes', async () => {
    const env = await envFor();
    const file = path.join(dir, 'card.html');
    // 41 characters, 42 bytes in UTF-8: the answers count bytes.
    const doc = '<body style="background:#036">café</body>';
    await writeFile(file, doc);
    const created = await ok(
      ['monitor', 'create', '--html-file', file, '--every', '1d', '--json'],
      env,
    );
    const m = JSON.parse(created.stdout) as {
      id: string;
      every: string;
      html?: string;
      html_bytes?: number;
      html_sha256?: string;
    };
    assert.deepEqual(
      [m.html, m.html_bytes, m.html_sha256, m.every],
      [undefined, 42, createHash('sha256').update(doc).digest('hex'), '1d'],
      'the document is not answered back, its size and digest are',
    );
    assert.match(
      (await ok(['monitor', 'list'], env)).stdout,
      new RegExp(`^${m.id} +active +1d +- +- +- +\\(html, 42 bytes\\)$`, 'm'),
    );

    const paused = await ok(['monitor', 'pause', m.id], env);
    assert.equal(paused.stdout, `paused ${m.id}\n`);
    assert.match((await ok(['monitor', 'get', m.id], env)).stdout, /^status: +paused$/m);
    const resumed = await ok(['monitor', 'resume', m.id], env);
    assert.match(resumed.stdout, new RegExp(`^resumed ${m.id}: next run at \\d{4}-\\S+Z\n$`));
    assert.equal(
      (JSON.parse((await ok(['monitor', 'get', m.id, '--json'], env)).stdout) as { status: string })
        .status,
      'active',
    );

    const deleted = await ok(['monitor', 'delete', m.id], env);
    assert.equal(deleted.stdout, `deleted ${m.id}\n`);
    const again = await cli(['monitor', 'get', m.id], env);
    assert.equal(again.code, 5, 'a 404 is a refused request');
    assert.match(again.stderr, /monitor not found \[404 not_found\]/);
    assert.equal((await ok(['monitor', 'list'], env)).stdout.trimEnd().split('\n').length, 1);
  });

  it('prints its help, and says what is wrong, with the CLI’s exit codes', async () => {
    const env = await envFor();
    const free = await envFor('free');
    const help = await ok(['help', 'monitor'], env);
    assert.match(help.stdout, /shotsmith monitor create <url> --every 15m\|1h\|6h\|1d\|7d/);
    assert.match(help.stdout, /shotsmith monitor runs <id> \[--changed\]/);
    assert.match((await ok(['monitor', '--help'], env)).stdout, /^shotsmith monitor:/);
    assert.match((await ok(['help'], env)).stdout, /shotsmith help \[monitor\|destinations\]/);

    const url = `${site.origin}/status`;
    const cases: Array<[string, string[], Record<string, string>, number, RegExp]> = [
      ['no subcommand', ['monitor'], env, 2, /monitor needs a command: create, list, get/],
      ['unknown subcommand', ['monitor', 'watch'], env, 2, /unknown monitor command "watch"/],
      ['missing id', ['monitor', 'get'], env, 2, /monitor get needs a monitor id \(mon_\.\.\.\)/],
      ['missing id (run)', ['monitor', 'run'], env, 2, /monitor run needs a monitor id/],
      ['not an id', ['monitor', 'pause', '42'], env, 2, /"42" is not a monitor id/],
      ['extra argument', ['monitor', 'delete', 'mon_a', 'mon_b'], env, 2, /unexpected argument/],
      ['no url', ['monitor', 'create', '--every', '1h'], env, 2, /needs a URL \(or --html-file/],
      ['no --every', ['monitor', 'create', url], env, 2, /monitor create needs --every \(15m,/],
      [
        'bad --every',
        ['monitor', 'create', url, '--every', '2h'],
        env,
        2,
        /--every takes 15m, 1h, 6h, 1d, 7d, not "2h"/,
      ],
      [
        'bad --threshold',
        ['monitor', 'create', url, '--every', '1h', '--threshold', 'lots'],
        env,
        2,
        /--threshold takes a number from 0\.0001 to 1, not "lots"/,
      ],
      [
        'threshold out of range (the service says)',
        ['monitor', 'create', url, '--every', '1h', '--threshold', '2'],
        env,
        5,
        /threshold.*\[400 invalid_request\]/,
      ],
      ['bad --limit', ['monitor', 'list', '--limit', '0'], env, 2, /--limit takes a whole number/],
      [
        'capture option elsewhere',
        ['monitor', 'list', '--width', '400'],
        env,
        2,
        /--width goes with monitor create, not monitor list/,
      ],
      [
        '--changed elsewhere',
        ['monitor', 'list', '--changed'],
        env,
        2,
        /--changed goes with monitor runs/,
      ],
      [
        'monitor flag on capture',
        ['capture', url, '--every', '1h'],
        env,
        2,
        /--every goes with shotsmith monitor, not capture/,
      ],
      [
        'markdown',
        ['monitor', 'create', '--markdown-file', '-', '--every', '1h'],
        env,
        2,
        /a monitor watches a URL or an HTML document/,
      ],
      [
        'pdf (the service says)',
        ['monitor', 'create', url, '--every', '1h', '--format', 'pdf'],
        env,
        5,
        /options\.format/,
      ],
      [
        'free plan',
        ['monitor', 'create', url, '--every', '1h'],
        free,
        5,
        /monitors is not available on the free plan \[400 plan_restriction\]/,
      ],
      [
        'unknown monitor',
        ['monitor', 'run', 'mon_000000000000000000000000'],
        env,
        5,
        /monitor not found \[404 not_found\]/,
      ],
      [
        'bad key',
        ['monitor', 'list'],
        { ...env, SHOTSMITH_API_KEY: 'sk_live_bad' },
        3,
        /\[401 unauthorized\]/,
      ],
    ];
    for (const [name, args, caseEnv, code, message] of cases) {
      const ran = await cli(args, caseEnv);
      assert.equal(ran.code, code, `${name}: ${ran.stderr}`);
      assert.match(ran.stderr, message, name);
    }
    const none = JSON.parse((await ok(['monitor', 'list', '--json'], env)).stdout) as Record<
      string,
      unknown
    >;
    assert.deepEqual([none.data, none.next_cursor], [[], null], 'nothing was created');
  });
});
