/**
 * The test tiers of package.json (README.md, "Tests"): every test file belongs to exactly one
 * of `test:unit`, `test:api`, `test:domain`, `test:browser` and `test:cluster`, and together
 * they are the files `npm test` runs, so a new file or folder cannot fall between them. The
 * unit tier is for pure modules: a test file there that starts a process, a server, a database
 * or a browser belongs under test/.
 */
import assert from 'node:assert/strict';
import { globSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '..');
const TIERS = ['test:unit', 'test:api', 'test:domain', 'test:browser', 'test:cluster'] as const;
/** The script that runs every test in one `node --test`, after the typecheck and lint. */
const ALL = 'test:only';

const scripts = (
  JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

/** The files a `node --test '<glob>' ...` script runs: its single-quoted globs, expanded. */
function filesOf(name: string): Set<string> {
  const script = scripts[name];
  assert.ok(script, `package.json has no "${name}" script`);
  const globs = [...script.matchAll(/'([^']+)'/g)].map((m) => m[1] as string);
  assert.ok(globs.length > 0, `"${name}" names no quoted glob`);
  return new Set(globs.flatMap((glob) => globSync(glob, { cwd: ROOT })).sort());
}

/**
 * Imports and calls that make a test impure. Reading and writing temporary files is fine;
 * timers are fine (the unit tier must still run in seconds), and so is a worker thread a
 * module under test starts for itself (the filter lists compile in one): it is in-process code
 * of ours, not a server, a database or a browser. Only the test's own imports are read.
 */
const IMPURE = [
  /(from |import\()'(node:)?(child_process|cluster|dgram|http|https|http2|net|sqlite|tls|worker_threads)'/,
  /(from |import\()'(puppeteer-core|playwright-core|pg|ioredis|bullmq|kysely|s3rver|@aws-sdk\/[^']+)'/,
  /(from |import\()'(\.\.\/)+test\//,
  /\.listen\(/,
];

describe('test tiers', () => {
  const all = filesOf(ALL);
  const tiers = new Map(TIERS.map((tier) => [tier, filesOf(tier)]));

  it('every test file is in exactly one tier', () => {
    const problems: string[] = [];
    for (const file of all) {
      const holders = TIERS.filter((tier) => tiers.get(tier)?.has(file));
      if (holders.length !== 1) problems.push(`${file}: ${holders.join(', ') || 'no tier'}`);
    }
    assert.deepEqual(problems, [], 'add the folder to one tier glob in package.json');
  });

  it('the tiers run nothing `npm test` leaves out, and each tier has files', () => {
    for (const [tier, files] of tiers) {
      assert.ok(files.size > 0, `${tier} matches no file`);
      assert.deepEqual(
        [...files].filter((file) => !all.has(file)),
        [],
        `${tier} runs files that ${ALL} does not`,
      );
    }
  });

  it('the unit tier is src/ only, and nothing under src/ runs in another tier', () => {
    for (const [tier, files] of tiers) {
      const outside = [...files].filter(
        (file) => file.startsWith('src/') !== (tier === 'test:unit'),
      );
      assert.deepEqual(outside, [], tier);
    }
  });

  it('unit tests start no process, server, database or browser', () => {
    const impure = [...(tiers.get('test:unit') ?? [])].filter((file) => {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      return IMPURE.some((pattern) => pattern.test(text));
    });
    assert.deepEqual(impure, [], 'move these under test/ (the unit tier is for pure modules)');
  });
});
