/**
 * The docs stay true to the tables they describe, and the repository stands alone: every value
 * of the plan table and of the bounds table appears in docs/plans-and-limits.md as the code
 * holds it, links between the docs resolve, every image a doc shows is there and is the image
 * its name says, and nothing cites a file outside the repository.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { BOUNDS } from '../src/domain/bounds.ts';
import { DEFAULT_PLANS, PLAN_NAMES } from '../src/domain/plans.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../src/lib/time.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const LIMITS_DOC = readFileSync(path.join(ROOT, 'docs/plans-and-limits.md'), 'utf8');

const count = (n: number) => n.toLocaleString('en-US');

/** A bound as the doc writes it: durations in their largest whole unit, sizes in KiB. */
function shownBound(name: string, value: number | readonly number[]): string {
  if (typeof value !== 'number') return value.map((v) => shownBound(name, v)).join(', ');
  if (name.endsWith('Ms')) {
    const units: Array<[number, (n: number) => string]> = [
      [DAY_MS, (n) => `${n} ${n === 1 ? 'day' : 'days'}`],
      [HOUR_MS, (n) => `${n} h`],
      [MINUTE_MS, (n) => `${n} min`],
      [1000, (n) => `${n} s`],
    ];
    for (const [unit, show] of units) if (value % unit === 0) return show(value / unit);
    return `${count(value)} ms`;
  }
  if (name.endsWith('Seconds')) return `${count(value)} s`;
  if (name.endsWith('Bytes') && value % 1024 === 0) return `${count(value / 1024)} KiB`;
  return count(value);
}

function shownPlanValue(value: unknown): string {
  if (value === null) return 'none';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.join(', ');
  if (typeof value === 'number') return count(value);
  return String(value);
}

/** The cells of the table row whose first cell is `name` in backticks. */
function row(name: string): string[] {
  const line = LIMITS_DOC.split('\n').find((l) => l.startsWith(`| \`${name}\` |`));
  assert.ok(line, `docs/plans-and-limits.md has no row for ${name}`);
  return line
    .split('|')
    .slice(1, -1)
    .map((cell) => cell.trim());
}

describe('docs/plans-and-limits.md', () => {
  it('lists every bound with the value the code holds', () => {
    for (const [section, bounds] of Object.entries(BOUNDS)) {
      for (const [key, value] of Object.entries(bounds)) {
        const name = `${section}.${key}`;
        assert.equal(row(name)[1], shownBound(key, value), name);
      }
    }
  });

  it('lists every plan field with each plan’s default value', () => {
    const header = row('price_cents').length;
    assert.ok(header >= 4);
    for (const field of Object.keys(DEFAULT_PLANS.free)) {
      if (field === 'name') continue;
      const cells = row(field);
      for (const [i, plan] of PLAN_NAMES.entries()) {
        const value = (DEFAULT_PLANS[plan] as unknown as Record<string, unknown>)[field];
        assert.equal(cells[i + 1], shownPlanValue(value), `${plan}.${field}`);
      }
    }
  });
});

const listFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (entry === 'node_modules' || entry === 'dist' || entry.startsWith('.')) return [];
    return statSync(full).isDirectory() ? listFiles(full) : [full];
  });

describe('the repository stands alone', () => {
  const docs = listFiles(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
  const readers = [
    ...docs,
    ...['README.md', 'ARCHITECTURE.md', 'CONTRIBUTING.md'].map((f) => path.join(ROOT, f)),
  ];

  it('links between the docs resolve', () => {
    for (const file of readers) {
      const text = readFileSync(file, 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (target === undefined || /^[a-z]+:/.test(target)) continue;
        const resolved = path.resolve(path.dirname(file), target);
        assert.ok(existsSync(resolved), `${path.relative(ROOT, file)} links to ${target}`);
      }
    }
  });

  it('every image a doc shows exists and is what its extension says', () => {
    const magic: Record<string, number[]> = {
      png: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
      jpg: [0xff, 0xd8, 0xff],
      webp: [0x52, 0x49, 0x46, 0x46],
    };
    let shown = 0;
    for (const file of docs) {
      const text = readFileSync(file, 'utf8');
      for (const [, target] of text.matchAll(/!\[[^\]]*\]\((images\/[^)\s]+)\)/g)) {
        const where = `${path.relative(ROOT, file)} shows ${target}`;
        const image = path.resolve(path.dirname(file), target ?? '');
        assert.ok(existsSync(image), where);
        const expected = magic[path.extname(image).slice(1)];
        assert.ok(expected, `${where}: an image extension`);
        assert.deepEqual([...readFileSync(image).subarray(0, expected.length)], expected, where);
        shown++;
      }
    }
    const monitors = readFileSync(path.join(ROOT, 'docs', 'monitors.md'), 'utf8');
    for (const name of ['before', 'after', 'diff']) {
      assert.ok(monitors.includes(`](images/monitor-${name}.png)`), `monitors.md shows ${name}`);
    }
    assert.ok(shown > 3);
  });

  it('every doc and section the code cites exists', () => {
    const sources = ['src', 'test', path.join('web', 'src')].flatMap((d) =>
      listFiles(path.join(ROOT, d)).filter((f) => /\.(ts|tsx)$/.test(f)),
    );
    for (const file of sources) {
      const text = readFileSync(file, 'utf8');
      for (const [, doc, section] of text.matchAll(/docs\/([a-z-]+\.md)(?:, "([^"\n]+)")?/g)) {
        const where = `${path.relative(ROOT, file)} cites docs/${doc}`;
        const docPath = path.join(ROOT, 'docs', doc ?? '');
        assert.ok(existsSync(docPath), where);
        if (section === undefined) continue;
        const headings = readFileSync(docPath, 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('#'))
          .map((l) => l.replace(/^#+\s*/, '').toLowerCase());
        assert.ok(headings.includes(section.toLowerCase()), `${where}, "${section}"`);
      }
    }
  });

  it('no code, test or doc cites a file outside the repository', () => {
    const sources = ['src', 'test', 'scripts', 'bench', path.join('web', 'src')].flatMap((d) =>
      listFiles(path.join(ROOT, d)).filter((f) => /\.(ts|tsx|md)$/.test(f)),
    );
    // Written in two pieces so this file does not match itself.
    const outside = new RegExp(['SPEC\\.md|DECI', 'SIONS(\\.md)?\\b'].join(''));
    for (const file of [...sources, ...readers]) {
      const lines = readFileSync(file, 'utf8').split('\n');
      for (const [i, line] of lines.entries()) {
        assert.ok(!outside.test(line), `${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
      }
    }
  });
});
