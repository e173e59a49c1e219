/**
 * The code's shape (ARCHITECTURE.md, "Shape"), checked so that it stays:
 *   - no port method takes more than three positional parameters: past three, a call reads
 *     as a row of bare values (`finish(id, owner, now, outcome, null, done)`), and the names
 *     go in an options object. Ports are the interfaces the domain declares (src/domain).
 *   - no function in src/ is longer than 80 lines, in-page scripts aside (they run in the
 *     page, serialised whole). Biome's `noExcessiveLinesPerFunction` says so in
 *     `npm run lint` (biome.json); the probe here proves the rule is on where it should be.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIOME = path.join(ROOT, 'node_modules', '.bin', 'biome');
const MAX_PORT_PARAMS = 3;
const MAX_FUNCTION_LINES = 80;

const OPENERS = '([{<';
const CLOSERS = ')]}>';

/** A method of an exported interface and how many parameters it declares. */
interface PortMethod {
  file: string;
  name: string;
  params: number;
}

/** `text` with comments and string contents blanked (their brackets are not code). */
function codeOnly(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '))
    .replace(/\/\/[^\n]*/g, (c) => ' '.repeat(c.length))
    .replace(/(['"`])(?:\\.|(?!\1)[^\\\n])*\1/g, (c) => `'${' '.repeat(c.length - 2)}'`);
}

/** The index just past the bracket that closes the one at `open` (`=>` is not a bracket). */
function closing(code: string, open: number): number {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    const c = code[i] as string;
    if (c === '>' && code[i - 1] === '=') continue;
    if (OPENERS.includes(c)) depth++;
    else if (CLOSERS.includes(c) && --depth === 0) return i + 1;
  }
  throw new Error(`unbalanced bracket at ${open}`);
}

/** Parameters in a parameter list's text (between its parentheses). */
function countParams(list: string): number {
  if (list.trim() === '') return 0;
  let count = 1;
  let depth = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i] as string;
    if (c === '>' && list[i - 1] === '=') continue;
    if (OPENERS.includes(c)) depth++;
    else if (CLOSERS.includes(c)) depth--;
    else if (c === ',' && depth === 0) count++;
  }
  // A trailing comma (biome's multi-line lists) ends the last parameter, not a new one.
  return list.trimEnd().endsWith(',') ? count - 1 : count;
}

/** The methods of the exported interfaces in one file: `name(...)` and `name: (...) =>`. */
function portMethods(file: string, text: string): PortMethod[] {
  const code = codeOnly(text);
  const methods: PortMethod[] = [];
  for (const match of code.matchAll(/export interface \w+[^{]*\{/g)) {
    const start = (match.index ?? 0) + match[0].length - 1;
    const body = code.slice(start + 1, closing(code, start) - 1);
    let depth = 0;
    for (let i = 0; i < body.length; i++) {
      const c = body[i] as string;
      if (c === '>' && body[i - 1] === '=') continue;
      if (c === '(' && depth === 0) {
        const member = /(?:^|[;\n])\s*(?:readonly\s+)?(\w+)\??\s*(?::\s*)?(?:<[^>]*>)?\s*$/.exec(
          body.slice(0, i),
        );
        const end = closing(body, i);
        if (member) {
          methods.push({
            file,
            name: member[1] as string,
            params: countParams(body.slice(i + 1, end - 1)),
          });
        }
        i = end - 1;
        continue;
      }
      if (OPENERS.includes(c)) depth++;
      else if (CLOSERS.includes(c)) depth--;
    }
  }
  return methods;
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

describe('shape', () => {
  it('reads parameter counts the way a reader would', () => {
    const found = portMethods(
      'probe.ts',
      [
        'export interface Probe {',
        '  /** (a, b, c, d) in a comment is not a method */',
        '  none(): void;',
        '  one(options: { a: number; b: (x: number, y: number) => void }): Promise<void>;',
        "  two(a: Map<string, number>, b: 'x, y'): void;",
        '  three: (a: number, b: number, c: number) => void;',
        '  four(',
        '    a: number,',
        '    b: number,',
        '    c: number,',
        '    d?: number,',
        '  ): Promise<boolean>;',
        '}',
      ].join('\n'),
    );
    assert.deepEqual(
      found.map((m) => [m.name, m.params]),
      [
        ['none', 0],
        ['one', 1],
        ['two', 2],
        ['three', 3],
        ['four', 4],
      ],
    );
  });

  it(`no port method of src/domain takes more than ${MAX_PORT_PARAMS} positional parameters`, async () => {
    const over: string[] = [];
    let seen = 0;
    for (const file of await sourceFiles(path.join(ROOT, 'src', 'domain'))) {
      const methods = portMethods(path.relative(ROOT, file), await readFile(file, 'utf8'));
      seen += methods.length;
      for (const m of methods) {
        if (m.params > MAX_PORT_PARAMS) over.push(`${m.file}: ${m.name} takes ${m.params}`);
      }
    }
    assert.ok(seen > 100, `the check read the ports (${seen} methods)`);
    assert.deepEqual(over, [], 'name them in an options object');
  });

  it(`lint refuses a function of more than ${MAX_FUNCTION_LINES} lines in src/, not in in-page/`, async () => {
    const lines = Array.from({ length: MAX_FUNCTION_LINES + 1 }, (_, i) => `  n += ${i};`);
    const source = [
      'export function probe(): number {',
      '  let n = 0;',
      ...lines,
      '  return n;',
      '}',
      '',
    ];
    const lint = async (folder: string): Promise<string> => {
      const file = path.join(ROOT, 'src', folder, `shape-probe-${process.pid}.ts`);
      await writeFile(file, source.join('\n'));
      try {
        const run = spawnSync(BIOME, ['lint', file], { cwd: ROOT, encoding: 'utf8' });
        return `${run.stdout}${run.stderr}`;
      } finally {
        await rm(file, { force: true });
      }
    };
    assert.match(await lint('domain'), /lint\/complexity\/noExcessiveLinesPerFunction/);
    assert.doesNotMatch(
      await lint('adapters/browser/page/in-page'),
      /lint\/complexity\/noExcessiveLinesPerFunction/,
    );
  });
});
