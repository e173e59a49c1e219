/**
 * The `shotsmith` command line tool as a subprocess against a real running service: output
 * files, `--json`, the progress line, and every documented exit code. Then the package as it
 * would be published: built with its own tsconfig, its `bin` run and its entry imported.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { PNG } from 'pngjs';
import { account, type TestPlan } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, imageSize, page, startSite } from '../helpers/fixtures.ts';
import { type Ran, runProcess } from '../helpers/subprocess.ts';
import {
  LOCATED_PAGE,
  LOCATED_TITLE,
  LOCKED_PROXY_ID,
  type OperatorProxies,
  operatorProxies,
  PROXY_COUNTRY,
  PROXY_ID,
} from './proxy-fixtures.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CLI = path.join(ROOT, 'packages', 'client', 'src', 'cli.ts');

/** The CLI (or another build of it) as a subprocess with only `env` and PATH. */
const cli = (
  args: string[],
  env: Record<string, string>,
  script = CLI,
  stdin?: string,
): Promise<Ran> =>
  runProcess(process.execPath, [script, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    ...(stdin === undefined ? {} : { stdin }),
  });

/**
 * C1 CSI (U+009B) starts an escape sequence on many terminals; U+202E reverses the text after
 * it. JSON.stringify escapes neither, so `--json` output would carry them raw.
 */
const TITLE = 'before\u009b2Jafter \u202egnp.exe';

describe('shotsmith CLI', () => {
  let t: TestApp;
  let site: FixtureSite;
  let dir: string;
  let proxies: OperatorProxies;
  before(async () => {
    site = await startSite({
      '/': page('<h1 style="font:40px sans-serif">cli</h1>'),
      '/titled': page('<p>titled</p>', `<title>${TITLE}</title>`),
      '/located': LOCATED_PAGE,
      '/dot.png': (_req, res) => {
        res.writeHead(404).end();
      },
    });
    proxies = await operatorProxies();
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: site.hostPort, PROXIES_FILE: proxies.file },
      plans: { free: { rate_per_minute: 1000, monthly_quota: 6 }, pro: { rate_per_minute: 1000 } },
    });
    dir = await mkdtemp(path.join(tmpdir(), 'shotsmith-cli-'));
  });
  after(async () => {
    await t?.close();
    await site?.close();
    await proxies?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A new account with a key (accounts.ts), and the CLI's environment for that key. */
  const withEnv = async (plan: TestPlan = 'free') => {
    const a = await account(t, { plan, key: true });
    return { ...a, env: { SHOTSMITH_API_KEY: a.key, SHOTSMITH_URL: t.url } };
  };
  const small = ['--width', '320', '--height', '200'];
  const located = ['--wait-for-selector', '#located', '--metadata', '--json'];

  it('captures to a file, prints JSON, reads usage', async () => {
    const { env } = await withEnv();
    const file = path.join(dir, 'shot.png');
    const saved = await cli(['capture', `${site.origin}/`, ...small, '-o', file], env);
    assert.equal(saved.code, 0, saved.stderr);
    assert.deepEqual(imageSize(await readFile(file)), { format: 'png', width: 320, height: 200 });
    assert.match(
      saved.stdout,
      /shot\.png \(\d+ bytes, image\/png\) http:\/\/127\.0\.0\.1:\d+\/images\//,
    );

    const json = await cli(
      ['capture', `${site.origin}/`, ...small, '--format=jpeg', '--full-page', '--json'],
      env,
    );
    assert.equal(json.code, 0, json.stderr);
    const body = JSON.parse(json.stdout) as {
      format: string;
      truncated: boolean;
      image_url: string;
    };
    assert.equal(body.format, 'jpeg');
    assert.equal(body.truncated, false);

    const plain = await cli(
      ['capture', `${site.origin}/`, ...small, '--hide-selectors', 'h1', '--hide-selectors', '.x'],
      env,
    );
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout.trim(), /^http:\/\/127\.0\.0\.1:\d+\/images\/[A-Za-z0-9_-]+\.png$/);

    const usage = await cli(['usage'], env);
    assert.equal(usage.code, 0);
    assert.match(usage.stdout, /^free: 3 of 6 used this month, 3 left; resets \d{4}-/);
    const usageJson = JSON.parse((await cli(['usage', '--json'], env)).stdout) as { used: number };
    assert.equal(usageJson.used, 3);
  });

  it('lists, deletes, and runs an async capture with a progress line (Pro)', async () => {
    const { env } = await withEnv('pro');
    const made = JSON.parse(
      (await cli(['capture', `${site.origin}/?pro`, ...small, '--json'], env)).stdout,
    ) as { id: number };
    const list = await cli(['list', '--json'], env);
    assert.equal(list.code, 0);
    assert.deepEqual(
      (JSON.parse(list.stdout) as { data: Array<{ id: number }> }).data.map((s) => s.id),
      [made.id],
    );
    const text = await cli(['list'], env);
    assert.match(text.stdout, new RegExp(`^${made.id}\\t`));
    const deleted = await cli(['delete', String(made.id)], env);
    assert.deepEqual([deleted.code, deleted.stdout], [0, `deleted ${made.id}\n`]);
    const again = await cli(['delete', String(made.id)], env);
    assert.equal(again.code, 5, 'a 404 is a refused request');
    assert.match(again.stderr, /screenshot not found \[404 not_found\]/);

    const file = path.join(dir, 'async.png');
    const queued = await cli(
      ['capture', `${site.origin}/?async`, ...small, '--async', '-o', file, '--json'],
      env,
    );
    assert.equal(queued.code, 0, queued.stderr);
    assert.match(queued.stderr, /^queued job_\w+$/m);
    assert.match(queued.stderr, /^succeeded job_\w+$/m);
    assert.equal((JSON.parse(queued.stdout) as { status: string }).status, 'succeeded');
    assert.equal(imageSize(await readFile(file)).width, 320);
  });

  it('goes out through a proxy, tells the page where it is, and says what is wrong (Pro)', async () => {
    const { env } = await withEnv('pro');
    const url = `${site.origin}/located?cli`;
    const ran = await cli(
      [
        'capture',
        url,
        ...small,
        '--proxy',
        PROXY_ID,
        '--geolocation',
        '52.52,13.405,25',
        ...located,
      ],
      env,
    );
    assert.equal(ran.code, 0, ran.stderr);
    const title = (r: Ran) =>
      (JSON.parse(r.stdout) as { metadata: { title: string } }).metadata.title;
    assert.equal(title(ran), LOCATED_TITLE);
    assert.ok(proxies.carried(url), 'the page came through the proxy');
    // A country instead of an id; the position as JSON, its accuracy the service's default.
    const country = `${site.origin}/located?cli-country`;
    const json = await cli(
      [
        'capture',
        country,
        ...small,
        '--proxy-country',
        PROXY_COUNTRY,
        '--geolocation={"latitude":-33.9,"longitude":18.4}',
        ...located,
      ],
      env,
    );
    assert.equal(json.code, 0, json.stderr);
    assert.equal(title(json), '-33.9,18.4,100');
    assert.ok(proxies.carried(country), "the country's proxy carried it");

    // A failing proxy is the service failing: exit 6, with the code.
    const locked = await cli(
      ['capture', `${site.origin}/?locked`, '--proxy', LOCKED_PROXY_ID],
      env,
    );
    assert.equal(locked.code, 6, locked.stderr);
    assert.match(locked.stderr, /proxy authentication failed \[502 proxy_error\]/);
    const both = await cli(
      ['capture', url, '--proxy', PROXY_ID, '--proxy-country', PROXY_COUNTRY],
      env,
    );
    assert.equal(both.code, 5, both.stderr);
    assert.match(both.stderr, /proxy and proxy_country cannot be used together/);
    const free = await cli(
      ['capture', url, '--proxy-country', PROXY_COUNTRY],
      (await withEnv()).env,
    );
    assert.equal(free.code, 5, free.stderr);
    assert.match(free.stderr, /\[400 plan_restriction\]/);

    // A position the command line can read is checked before anything is sent.
    const sent = proxies.proxy.records.length;
    const form =
      '--geolocation takes LAT,LON[,ACCURACY] (degrees, degrees, metres), e.g. 52.52,13.405';
    for (const [value, message] of [
      ['52.52', `${form}, not "52.52"`],
      ['north,east', `${form}, not "north,east"`],
      ['1,2,3,4', `${form}, not "1,2,3,4"`],
      ['52.52,,3', `${form}, not "52.52,,3"`],
      ['91,0', '--geolocation: the latitude is from -90 to 90, not 91'],
      ['0,-180.5', '--geolocation: the longitude is from -180 to 180, not -180.5'],
      ['0,0,-5', '--geolocation: the accuracy is metres, 0 or more, not -5'],
      ['{"latitude":', `--geolocation takes JSON, e.g. --geolocation '{"...": ...}'`],
    ] as const) {
      const refused = await cli(['capture', url, '--proxy', PROXY_ID, '--geolocation', value], env);
      assert.equal(refused.code, 2, `${value}: ${refused.stderr}`);
      assert.equal(refused.stderr, `shotsmith: ${message}\n`, value);
    }
    assert.equal(proxies.proxy.records.length, sent, 'no capture was asked for');
    const help = await cli(['help'], env);
    assert.match(help.stdout, /--proxy-country +string +Go out through an operator proxy/);
    assert.match(help.stdout, /--geolocation +object +The position the page's Geolocation API/);
    assert.match(help.stdout, /--geolocation also takes LAT,LON\[,ACCURACY\]/);
  });

  it('captures an HTML file and Markdown from stdin, and says what is wrong with them', async () => {
    const { env } = await withEnv();
    const html = path.join(dir, 'card.html');
    await writeFile(html, '<body style="margin:0;background:#f00"><img src="dot.png"></body>');
    const file = path.join(dir, 'card.png');
    const based = [`--document-base-url=${site.origin}/`];
    const ran = await cli(['capture', '--html-file', html, ...based, ...small, '-o', file], env);
    assert.equal(ran.code, 0, ran.stderr);
    const png = PNG.sync.read(await readFile(file));
    const at = (100 * 320 + 200) * 4; // away from the image's broken-image icon
    assert.deepEqual(
      [png.width, png.height, ...png.data.subarray(at, at + 3)],
      [320, 200, 255, 0, 0],
    );
    assert.equal(site.hits.get('/dot.png'), 1, 'the relative image loads from the base');

    const md = await cli(
      ['capture', '--markdown-file', '-', ...small, '--dark-mode', '--json'],
      env,
      CLI,
      '# From stdin\n\nHello.',
    );
    assert.equal(md.code, 0, md.stderr);
    assert.equal((JSON.parse(md.stdout) as { width: number }).width, 320);

    const big = path.join(dir, 'big.md');
    await writeFile(big, 'x'.repeat(256 * 1024 + 1));
    for (const [args, pattern] of [
      [['capture', '--html-file', html, '--markdown-file', big], /one of --html-file or/],
      [['capture', '--markdown-file', big], /big\.md is 262145 bytes: markdown may be at most/],
      [['capture', '--html-file', path.join(dir, 'missing.html')], /cannot read/],
      [['capture', `${site.origin}/`, '--document-base-url', site.origin], /goes with --html/],
      [['capture', '--html-file', html, `${site.origin}/`], /unexpected argument/],
      [['capture', '--html', '<p>x</p>'], /unknown option --html/],
    ] as const) {
      const refused = await cli([...args], env);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, pattern);
    }
  });

  it('queues a batch from a file of URLs, and waits for it with --wait (Pro)', async () => {
    const { env } = await withEnv('pro');
    const file = path.join(dir, 'urls.txt');
    await writeFile(
      file,
      `# pages to capture\n${site.origin}/?b1\n\n   \n  ${site.origin}/?b2  \n# done\n`,
    );
    const queued = await cli(['batch', file, ...small], env);
    assert.equal(queued.code, 0, queued.stderr);
    const lines = queued.stdout.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^batch bat_\w{24}$/);
    assert.deepEqual(
      lines.slice(1).map((l) => l.replace(/^job_\w{24}\t/, '')),
      [`${site.origin}/?b1`, `${site.origin}/?b2`],
      'one job per URL, comments and blank lines skipped',
    );

    const waited = await cli(['batch', file, ...small, '--format', 'jpeg', '--wait'], env);
    assert.equal(waited.code, 0, waited.stderr);
    assert.match(waited.stderr, /^queued bat_\w{24}: 2 captures$/m);
    assert.match(waited.stderr, /^bat_\w{24}: 2 of 2 ended \(0 failed\)$/m);
    const [head, ...jobs] = waited.stdout.trimEnd().split('\n');
    assert.match(head ?? '', /^batch bat_\w{24}: 2 succeeded, 0 failed$/);
    for (const job of jobs) {
      assert.match(job, /^job_\w{24}\tsucceeded\thttp:\/\/127\.0\.0\.1:\d+\/\?b\d\thttp:.*\.jpg$/);
    }

    // A failed capture: the batch completes, exit 6, the job's error printed.
    const failing = path.join(dir, 'failing.txt');
    await writeFile(failing, `${site.origin}/\n${site.origin}/missing\n`);
    const failed = await cli(
      ['batch', failing, ...small, '--fail-on-http-error', '--wait', '--json'],
      env,
    );
    assert.equal(failed.code, 6, failed.stderr);
    const body = JSON.parse(failed.stdout) as { succeeded: number; failed: number };
    assert.deepEqual([body.succeeded, body.failed], [1, 1]);
    assert.match(failed.stderr, /1 of the batch's 2 captures failed/);

    // The file is checked before anything is sent; the service names a bad request.
    const empty = path.join(dir, 'empty.txt');
    await writeFile(empty, '# nothing\n\n');
    const none = await cli(['batch', empty], env);
    assert.deepEqual(
      [none.code, none.stderr.trim()],
      [2, `shotsmith: ${empty} has no URLs (one a line, # for comments)`],
    );
    const many = path.join(dir, 'many.txt');
    await writeFile(many, Array.from({ length: 51 }, (_, i) => `${site.origin}/?${i}`).join('\n'));
    const tooMany = await cli(['batch', many], env);
    assert.equal(tooMany.code, 2);
    assert.match(tooMany.stderr, /has 51 URLs; a batch takes at most 50/);
    const absent = await cli(['batch', path.join(dir, 'absent.txt')], env);
    assert.equal(absent.code, 2);
    assert.match(absent.stderr, /cannot read .*absent\.txt/);
    const badUrl = path.join(dir, 'bad.txt');
    await writeFile(badUrl, `${site.origin}/\nftp://example.com/\n`);
    const refused = await cli(['batch', badUrl], env);
    assert.equal(refused.code, 5);
    assert.match(refused.stderr, /requests\[1\]\.url must use http or https/);
    const free = await withEnv();
    const plan = await cli(['batch', file], free.env);
    assert.equal(plan.code, 5);
    assert.match(
      plan.stderr,
      /batches are not available on the free plan \[400 plan_restriction\]/,
    );
  });

  it('prints a signed render link the service accepts', async () => {
    const a = await withEnv();
    const printed = await cli(
      [
        'link',
        `${site.origin}/?link`,
        ...small,
        '--key-id',
        String(a.keyId),
        '--expires-in',
        '600',
      ],
      {
        ...a.env,
        SHOTSMITH_SIGNING_SECRET: a.signingSecret,
      },
    );
    assert.equal(printed.code, 0, printed.stderr);
    const res = await fetch(printed.stdout.trim(), { redirect: 'manual' });
    assert.equal(res.status, 302);
    const noSecret = await cli(['link', `${site.origin}/`, '--key-id', String(a.keyId)], a.env);
    assert.equal(noSecret.code, 2);
    assert.match(noSecret.stderr, /SHOTSMITH_SIGNING_SECRET/);
    // A proxy's id rides in the link; its URL (credentials and all) and a position do not.
    const signed = { ...a.env, SHOTSMITH_SIGNING_SECRET: a.signingSecret };
    const keyed = ['--key-id', String(a.keyId)];
    const viaId = await cli(['link', `${site.origin}/`, ...keyed, '--proxy', PROXY_ID], signed);
    assert.equal(viaId.code, 0, viaId.stderr);
    assert.equal(new URL(viaId.stdout.trim()).searchParams.get('proxy'), PROXY_ID);
    for (const [flag, value, message] of [
      ['--proxy', 'socks5://u:secret@proxy.example.net:1080', /--proxy in a render link names/],
      ['--geolocation', '52.52,13.405', /--geolocation is an object/],
    ] as const) {
      const refused = await cli(['link', `${site.origin}/`, ...keyed, flag, value], signed);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, message);
      assert.equal(refused.stdout, '', 'no link printed');
    }
  });

  it('says what is wrong, with an exit code for each kind of failure', async () => {
    const { env, id: userId } = await withEnv();
    const cases: Array<[string, string[], Record<string, string>, number, RegExp]> = [
      ['no command', [], env, 2, /^$/],
      ['unknown command', ['snap'], env, 2, /unknown command "snap"/],
      [
        'unknown option',
        ['capture', 'http://x/', '--colour', 'red'],
        env,
        2,
        /unknown option --colour/,
      ],
      [
        'bad value',
        ['capture', 'http://x/', '--width', 'wide'],
        env,
        2,
        /--width takes a whole number, not "wide"/,
      ],
      ['no url', ['capture'], env, 2, /capture needs a URL/],
      ['no key', ['usage'], { SHOTSMITH_URL: t.url }, 2, /SHOTSMITH_API_KEY/],
      [
        'bad key',
        ['usage'],
        { ...env, SHOTSMITH_API_KEY: 'sk_live_bad' },
        3,
        /unauthorized \[401 unauthorized\]/,
      ],
      ['refused url', ['capture', 'http://10.0.0.1/'], env, 5, /url_not_allowed/],
      ['plan', ['capture', `${site.origin}/`, '--format', 'webp'], env, 5, /plan_restriction/],
      [
        'unreachable',
        ['usage'],
        { ...env, SHOTSMITH_URL: 'http://127.0.0.1:9' },
        7,
        /could not reach/,
      ],
    ];
    for (const [name, args, caseEnv, code, message] of cases) {
      const ran = await cli(args, caseEnv);
      assert.equal(ran.code, code, `${name}: ${ran.stderr}`);
      assert.match(ran.stderr, message, name);
    }
    const help = await cli(['help'], env);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--device-scale-factor +number/);
    // A spent quota is 4, with when it resets.
    const month = new Date().toISOString().slice(0, 7);
    for (let i = 0; i < 6; i++)
      await t.deps.ctx.store.quota.reserve({ userId, period: month }, { limit: 6 });
    const spent = await cli(['capture', `${site.origin}/`], env);
    assert.equal(spent.code, 4, spent.stderr);
    assert.match(
      spent.stderr,
      /monthly quota exceeded \(resets \d{4}-\d{2}-01T00:00:00\.000Z\) \[402 quota_exceeded\]/,
    );
  });

  it('escapes the control characters a page put in its title', async () => {
    const { env } = await withEnv();
    const ran = await cli(
      ['capture', `${site.origin}/titled`, ...small, '--metadata', '--json'],
      env,
    );
    assert.equal(ran.code, 0, ran.stderr);
    assert.doesNotMatch(ran.stdout, /[\u009b\u202e]/);
    assert.match(ran.stdout, /before\\u009b2Jafter \\u202egnp\.exe/);
    const body = JSON.parse(ran.stdout) as { metadata: { title: string } };
    assert.equal(body.metadata.title, TITLE, 'the escaped JSON still parses to the title');
  });

  it('builds as a package whose bin and entry work', async () => {
    const out = path.join(dir, 'dist');
    await promisify(execFile)(
      path.join(ROOT, 'node_modules', '.bin', 'tsc'),
      ['-p', path.join(ROOT, 'packages', 'client', 'tsconfig.build.json'), '--outDir', out],
      { cwd: ROOT },
    );
    const help = await cli(['help'], {}, path.join(out, 'cli.js'));
    assert.equal(help.code, 0, help.stderr);
    const monitorHelp = await cli(['help', 'monitor'], {}, path.join(out, 'cli.js'));
    assert.equal(monitorHelp.code, 0, monitorHelp.stderr);
    assert.match(monitorHelp.stdout, /shotsmith monitor run <id> \[--wait\]/);
    const entry = (await import(path.join(out, 'index.js'))) as Record<string, unknown>;
    for (const name of ['Shotsmith', 'ShotsmithError', 'renderLink', 'verifyWebhook']) {
      assert.equal(typeof entry[name], 'function', name);
    }
    const types = await readFile(path.join(out, 'index.d.ts'), 'utf8');
    assert.match(types, /export \{[^}]*\bShotsmith,/);
    assert.match(types, /export \{[^}]*\btype MonitorChangedEvent,/);
  });
});

describe('shotsmith CLI, when the image does not answer', () => {
  let t: TestApp;
  let site: FixtureSite;
  let front: FixtureSite;
  let dir: string;
  before(async () => {
    site = await startSite({ '/': page('<h1>async</h1>') });
    // The public URL's host (a CDN, a proxy) fails while the API answers: the finished job
    // points at an image that is, for now, an error page.
    front = await startSite({});
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: site.hostPort, PUBLIC_URL: front.origin },
      plans: { pro: { rate_per_minute: 1000 } },
    });
    dir = await mkdtemp(path.join(tmpdir(), 'shotsmith-cli-'));
  });
  after(async () => {
    await t?.close();
    await site?.close();
    await front?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes no file from an async job whose image answers an error', async () => {
    const key = await account(t, { plan: 'pro', key: true });
    const file = path.join(dir, 'async.png');
    const ran = await cli(
      ['capture', `${site.origin}/`, '--width', '320', '--height', '200', '--async', '-o', file],
      { SHOTSMITH_API_KEY: key.key, SHOTSMITH_URL: t.url },
    );
    assert.equal(ran.code, 5, `a 404 image is a refused request: ${ran.stderr}`);
    assert.match(ran.stderr, /\[404 not_found\]/);
    await assert.rejects(readFile(file), { code: 'ENOENT' }, 'no file holds the error page');
    assert.equal([...front.hits.keys()].filter((p) => p.startsWith('/images/')).length, 1);
  });
});
