/**
 * `shotsmith destinations ...` as a subprocess against a real running service and an
 * S3-compatible server (bucket-fixtures.ts): add (the secret from the environment, or from
 * stdin), list, test, a capture into one with --storage, delete, `help destinations`, and
 * what is wrong with a bad command line, with the CLI's exit codes.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { account, type TestPlan } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { type Ran, runProcess } from '../helpers/subprocess.ts';
import { S3RVER_CREDENTIAL, startBucket, type TestBucket } from './bucket-fixtures.ts';

const CLI = path.resolve(import.meta.dirname, '..', '..', 'packages', 'client', 'src', 'cli.ts');

const cli = (args: string[], env: Record<string, string>, stdin?: string): Promise<Ran> =>
  runProcess(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    ...(stdin === undefined ? {} : { stdin }),
  });

const DST = /dst_[0-9A-Za-z]{24}/;

describe('shotsmith destinations', () => {
  let t: TestApp;
  let site: FixtureSite;
  let bucket: TestBucket;
  before(async () => {
    site = await startSite({ '/': page('<h1 style="font:40px sans-serif">cli bucket</h1>') });
    bucket = await startBucket();
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: `${site.hostPort},${bucket.hostPort}` },
      plans: { pro: { rate_per_minute: 1000 } },
    });
  });
  after(async () => {
    await t?.close();
    await site?.close();
    await bucket?.close();
  });

  /** The CLI's environment for a new account's key, with the bucket's credentials. */
  const envFor = async (plan: TestPlan = 'pro') => {
    const { key } = await account(t, { plan, key: true });
    return {
      SHOTSMITH_API_KEY: key,
      SHOTSMITH_URL: t.url,
      SHOTSMITH_STORAGE_ACCESS_KEY_ID: S3RVER_CREDENTIAL,
      SHOTSMITH_STORAGE_SECRET_ACCESS_KEY: S3RVER_CREDENTIAL,
    };
  };
  const ok = async (args: string[], env: Record<string, string>, stdin?: string) => {
    const ran = await cli(args, env, stdin);
    assert.equal(ran.code, 0, `${args.join(' ')}: ${ran.stderr}`);
    return ran;
  };
  const where = (extra: string[] = []) => [
    '--region',
    'us-east-1',
    '--bucket',
    bucket.s3.bucket,
    '--endpoint',
    bucket.s3.endpoint,
    ...extra,
  ];

  it('adds, lists, tests, captures into and deletes a destination', async () => {
    const env = await envFor();
    const added = await ok(
      ['destinations', 'add', '--name', 'cli', '--prefix', 'cli', ...where()],
      env,
    );
    const id = added.stdout.match(DST)?.[0] ?? '';
    assert.match(added.stdout, new RegExp(`^id: +${id}\n`));
    for (const line of [
      'name:       cli',
      `endpoint:   ${bucket.s3.endpoint}`,
      `bucket:     ${bucket.s3.bucket}`,
      'prefix:     cli',
      'path style: yes',
      'acl:        private',
    ]) {
      assert.ok(added.stdout.includes(`${line}\n`), `${line} in\n${added.stdout}`);
    }
    // The secret from stdin instead, the key id as a flag; its own environment has neither.
    const { SHOTSMITH_API_KEY, SHOTSMITH_URL } = env;
    const second = await ok(
      [
        'destinations',
        'add',
        '--name',
        'from stdin',
        '--access-key-id',
        S3RVER_CREDENTIAL,
        '--secret-access-key-file',
        '-',
        '--acl',
        'public-read',
        '--json',
        ...where(),
      ],
      { SHOTSMITH_API_KEY, SHOTSMITH_URL },
      `${S3RVER_CREDENTIAL}\n`,
    );
    const made = JSON.parse(second.stdout) as Record<string, unknown>;
    assert.deepEqual(
      [made.name, made.prefix, made.acl, made.path_style],
      ['from stdin', '', 'public-read', true],
    );

    const listed = await ok(['destinations', 'list'], env);
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    assert.match(header ?? '', /^ID +NAME +BUCKET +ENDPOINT +PREFIX +TESTED$/);
    assert.equal(rows.length, 2);
    assert.match(
      rows[0] ?? '',
      new RegExp(`^${id} +cli +${bucket.s3.bucket} +http://${bucket.hostPort} +cli +\\d{4}-`),
    );
    assert.match(rows[1] ?? '', /^dst_\S+ +from stdin +\S+ +\S+ +- +\d{4}-/);

    const tested = await ok(['destinations', 'test', id], env);
    assert.match(tested.stdout, new RegExp(`^tested ${id}: the bucket took a test object \\(`));

    // A capture names it with --storage, JSON as every object option.
    const shot = await ok(
      [
        'capture',
        `${site.origin}/`,
        '--width',
        '320',
        '--height',
        '200',
        '--storage',
        JSON.stringify({ destination: id, path: 'shots/{id}.{ext}', hosted: false }),
        '--json',
      ],
      env,
    );
    const answer = JSON.parse(shot.stdout) as { image_url?: string; storage: { key: string } };
    assert.equal(answer.image_url, undefined);
    assert.match(answer.storage.key, /^cli\/shots\/[^/]+\.png$/);
    assert.equal((await bucket.object(answer.storage.key)).type, 'image/png');

    assert.equal((await ok(['destinations', 'delete', id], env)).stdout, `deleted ${id}\n`);
    await ok(['destinations', 'delete', String(made.id)], env);
    assert.equal((await ok(['destinations', 'list'], env)).stdout.trimEnd().split('\n').length, 1);
    // A capture naming it is refused now (5), one into a bucket that is gone fails (6).
    const gone = await cli(
      ['capture', `${site.origin}/`, '--storage', JSON.stringify({ destination: id })],
      env,
    );
    assert.equal(gone.code, 5, gone.stderr);
    const spare = await bucket.spareBucket('cli-spare');
    const doomed = await ok(
      ['destinations', 'add', '--name', 'doomed', ...where(['--bucket', spare.name])],
      env,
    );
    await spare.remove();
    const failed = await cli(
      [
        'capture',
        `${site.origin}/?gone`,
        '--storage',
        JSON.stringify({ destination: doomed.stdout.match(DST)?.[0] }),
      ],
      env,
    );
    assert.equal(failed.code, 6, failed.stderr);
    assert.match(failed.stderr, /NoSuchBucket.*\[502 storage_destination_error\]/);
  });

  it('prints its help, and says what is wrong, with the CLI’s exit codes', async () => {
    const env = await envFor();
    const free = await envFor('free');
    const help = await ok(['help', 'destinations'], env);
    assert.match(help.stdout, /shotsmith destinations add --name NAME --region REGION/);
    assert.match(help.stdout, /SHOTSMITH_STORAGE_SECRET_ACCESS_KEY/);
    assert.match((await ok(['destinations', '--help'], env)).stdout, /^shotsmith destinations:/);
    assert.match(
      (await ok(['help'], env)).stdout,
      /shotsmith destinations list\|add\|test\|delete/,
    );

    const { SHOTSMITH_STORAGE_SECRET_ACCESS_KEY: _secret, ...noSecret } = env;
    const cases: Array<[string, string[], Record<string, string>, number, RegExp]> = [
      ['no subcommand', ['destinations'], env, 2, /destinations needs a command: list, add/],
      ['unknown subcommand', ['destinations', 'show'], env, 2, /unknown destinations command/],
      ['missing id', ['destinations', 'test'], env, 2, /test needs a destination id \(dst_/],
      ['not an id', ['destinations', 'delete', 'mon_x'], env, 2, /"mon_x" is not a destination/],
      ['no region', ['destinations', 'add', '--name', 'x', '--bucket', 'b'], env, 2, /--region/],
      ['no secret', ['destinations', 'add', '--name', 'x', ...where()], noSecret, 2, /SECRET/],
      // A secret is never a flag: other users of the machine could read it.
      [
        'secret as a flag',
        ['destinations', 'add', '--secret-access-key', 'x'],
        env,
        2,
        /unknown option --secret-access-key/,
      ],
      [
        'secret file missing',
        [
          'destinations',
          'add',
          '--name',
          'x',
          '--secret-access-key-file',
          '/nonexistent',
          ...where(),
        ],
        env,
        2,
        /cannot read \/nonexistent/,
      ],
      [
        'bad --acl',
        ['destinations', 'add', '--name', 'x', '--acl', 'open', ...where()],
        env,
        2,
        /--acl takes private or public-read, not "open"/,
      ],
      [
        'bad --path-style',
        ['destinations', 'add', '--name', 'x', '--path-style=maybe', ...where()],
        env,
        2,
        /--path-style takes true or false/,
      ],
      [
        'add flag elsewhere',
        ['destinations', 'list', '--bucket', 'b'],
        env,
        2,
        /--bucket goes with destinations add, not destinations list/,
      ],
      [
        'capture option',
        ['destinations', 'list', '--width', '400'],
        env,
        2,
        /--width is a capture option/,
      ],
      [
        'destination flag on capture',
        ['capture', `${site.origin}/`, '--bucket', 'b'],
        env,
        2,
        /--bucket goes with shotsmith destinations, not capture/,
      ],
      [
        'the bucket refuses',
        ['destinations', 'add', '--name', 'x', ...where(['--bucket', 'no-such-bucket-here'])],
        env,
        5,
        /NoSuchBucket.*\[400 storage_test_failed\]/,
      ],
      [
        'unknown destination',
        ['destinations', 'test', `dst_${'0'.repeat(24)}`],
        env,
        5,
        /storage destination not found \[404 not_found\]/,
      ],
      [
        'free plan',
        ['destinations', 'add', '--name', 'x', ...where()],
        free,
        5,
        /plan_restriction/,
      ],
    ];
    for (const [name, args, caseEnv, code, message] of cases) {
      const ran = await cli(args, caseEnv);
      assert.equal(ran.code, code, `${name}: ${ran.stderr}`);
      assert.match(ran.stderr, message, name);
    }
  });
});
