#!/usr/bin/env node
/**
 * `shotsmith`: the Shotsmith API from a shell, on the client library. The key comes from
 * SHOTSMITH_API_KEY (or --api-key), the service from SHOTSMITH_URL (or --url). Every capture
 * option is a flag named after its field (`full_page` is `--full-page`); `shotsmith help`
 * lists them. Exit codes (EXIT below) let scripts tell a refusal from an outage.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { CAPTURE_FIELDS } from './capture-fields.ts';
import { Shotsmith } from './client.ts';
import { ShotsmithError } from './errors.ts';
import { type LinkOptionValue, renderLink } from './links.ts';
import type { BatchStatus, CaptureOptions, ScreenshotStatus } from './types.ts';

export const EXIT = {
  ok: 0,
  /** Something unexpected (a bug, a file that could not be written). */
  failure: 1,
  /** The command line itself is wrong: unknown command or flag, missing argument. */
  usage: 2,
  /** The key was refused (401) or the request forbidden (403). */
  unauthorized: 3,
  /** The monthly quota is spent (402) or the rate limit hit (429) after the retries. */
  limited: 4,
  /** The service refused the request (400, 404, 413): the message says why. */
  refused: 5,
  /** The service or the target failed (5xx, a failed async job). */
  unavailable: 6,
  /** The service could not be reached at all. */
  network: 7,
} as const;

class UsageError extends Error {}

/**
 * Control characters (C0, DEL, C1), line and paragraph separators and bidirectional
 * overrides: in a terminal they move the cursor, rewrite earlier lines or reorder text.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const escapeControl = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * Text from the service, made safe to print: page titles, target messages and URLs can
 * carry whatever the page or its author chose, so every control character is shown escaped.
 */
export const printable = (value: unknown): string => String(value).replace(CONTROLS, escapeControl);

/** What JSON.stringify leaves raw in strings: it escapes C0 controls but not DEL, C1 or bidi. */
const UNESCAPED_BY_JSON = /[\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** JSON for stdout; its own newlines and indentation stay, being outside any string. */
const printJson = (value: unknown): string =>
  `${JSON.stringify(value, null, 2).replace(UNESCAPED_BY_JSON, escapeControl)}\n`;

type FieldType = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';
const FIELDS = CAPTURE_FIELDS as Record<string, { type: FieldType; help: string }>;
/** Flags the CLI sets itself, per command, rather than as capture options. */
const OWN_FIELDS = new Set([
  'url',
  'async',
  'webhook_url',
  'response_type',
  // A document comes from a file (--html-file, --markdown-file), its base from
  // --document-base-url: --base-url is the service's address.
  'html',
  'markdown',
  'base_url',
]);

const flagName = (field: string) => `--${field.replace(/_/g, '-')}`;
const fieldName = (flag: string) => flag.replace(/^--/, '').replace(/-/g, '_');

interface Parsed {
  positionals: string[];
  /** CLI flags (output, json, ...), by name without dashes. */
  flags: Map<string, string | true>;
  /** Capture options, by field name, typed. */
  options: Record<string, unknown>;
}

const CLI_FLAGS: Record<string, 'value' | 'switch'> = {
  output: 'value',
  o: 'value',
  json: 'switch',
  async: 'switch',
  'webhook-url': 'value',
  'api-key': 'value',
  'base-url': 'value',
  limit: 'value',
  cursor: 'value',
  'key-id': 'value',
  'expires-in': 'value',
  quiet: 'switch',
  'html-file': 'value',
  'markdown-file': 'value',
  'document-base-url': 'value',
  wait: 'switch',
  help: 'switch',
  h: 'switch',
};

function typed(field: string, type: FieldType, text: string): unknown {
  const flag = flagName(field);
  switch (type) {
    case 'boolean':
      if (text === 'true') return true;
      if (text === 'false') return false;
      throw new UsageError(`${flag} takes true or false, not "${text}"`);
    case 'integer':
    case 'number': {
      const n = Number(text);
      if (
        text.trim() === '' ||
        !Number.isFinite(n) ||
        (type === 'integer' && !Number.isInteger(n))
      ) {
        throw new UsageError(
          `${flag} takes ${type === 'integer' ? 'a whole number' : 'a number'}, not "${text}"`,
        );
      }
      return n;
    }
    case 'object':
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new UsageError(`${flag} takes JSON, e.g. ${flag} '{"...": ...}'`);
      }
    default:
      return text;
  }
}

export function parseArgs(argv: readonly string[]): Parsed {
  const parsed: Parsed = { positionals: [], flags: new Map(), options: {} };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('-') || arg === '-') {
      parsed.positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = (eq === -1 ? arg : arg.slice(0, eq)).replace(/^--?/, '');
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    const next = () => {
      if (inline !== undefined) return inline;
      const value = argv[++i];
      if (value === undefined) throw new UsageError(`${arg} needs a value`);
      return value;
    };
    const own = CLI_FLAGS[name];
    if (own !== undefined) {
      parsed.flags.set(name, own === 'switch' ? true : next());
      continue;
    }
    const field = fieldName(`--${name}`);
    const spec = FIELDS[field];
    if (spec === undefined || OWN_FIELDS.has(field)) {
      throw new UsageError(`unknown option ${arg.split('=')[0]} (shotsmith help lists them)`);
    }
    if (spec.type === 'boolean' && inline === undefined) {
      // A switch: --full-page; --full-page=false to say no.
      parsed.options[field] = true;
      continue;
    }
    if (spec.type === 'array') {
      const list = (parsed.options[field] as unknown[] | undefined) ?? [];
      list.push(next());
      parsed.options[field] = list;
      continue;
    }
    if (field in parsed.options) throw new UsageError(`${flagName(field)} is given twice`);
    parsed.options[field] = typed(field, spec.type, next());
  }
  return parsed;
}

const HELP = `shotsmith: screenshots from the command line (Shotsmith API)

Usage:
  shotsmith capture <url> [options] [-o FILE] [--json] [--async [--webhook-url URL]]
  shotsmith capture --html-file FILE | --markdown-file FILE [--document-base-url URL] [...]
  shotsmith batch <file> [options] [--webhook-url URL] [--wait] [--json]
  shotsmith usage [--json]
  shotsmith list [--limit N] [--cursor C] [--json]
  shotsmith delete <id>
  shotsmith link <url> [options] --key-id N [--expires-in SECONDS]
  shotsmith help

Environment: SHOTSMITH_API_KEY (or --api-key), SHOTSMITH_URL (or --base-url; default
http://localhost:8080), SHOTSMITH_SIGNING_SECRET (for link).

capture without -o prints the image URL; with -o it writes the image (one round trip).
--json prints the API's answer as JSON. --async queues the capture (Pro) and waits for it,
with a progress line on stderr (--quiet hides it). --html-file and --markdown-file capture a
document instead of a URL (- reads it from stdin; at most 1 MiB of HTML, 256 KiB of
Markdown); --document-base-url is where it stands (its relative links resolve there).

batch queues one async capture per URL of <file> (Pro; one URL a line, blank lines and
lines starting with # skipped, at most 50), each with the capture options given; it prints
the batch id and each job (id, URL). --wait polls until every job has ended and prints each
one's status and image URL or error (exit 6 if any failed).

Exit codes: 0 ok, 1 unexpected failure, 2 bad command line, 3 key refused, 4 quota or rate
limit, 5 request refused (400/404), 6 service or target failed, 7 service unreachable.

Capture options (booleans are switches; lists repeat the flag; objects take JSON):
${Object.entries(FIELDS)
  .filter(([name]) => !OWN_FIELDS.has(name))
  .map(([name, spec]) => `  ${flagName(name).padEnd(26)} ${spec.type.padEnd(8)} ${spec.help}`)
  .join('\n')}
`;

interface Io {
  env: Record<string, string | undefined>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Whether stderr is a terminal (the progress line redraws itself). */
  tty: boolean;
  /** Standard input, read whole (`--html-file -`). */
  stdin?: () => Promise<string>;
}

function client(parsed: Parsed, io: Io): Shotsmith {
  const apiKey = String(parsed.flags.get('api-key') ?? io.env.SHOTSMITH_API_KEY ?? '');
  if (!apiKey) throw new UsageError('no API key: set SHOTSMITH_API_KEY or pass --api-key');
  const baseUrl = String(
    parsed.flags.get('base-url') ?? io.env.SHOTSMITH_URL ?? 'http://localhost:8080',
  );
  if (!/^https?:\/\//.test(baseUrl))
    throw new UsageError(`SHOTSMITH_URL must be an http(s) URL, not "${baseUrl}"`);
  return new Shotsmith({ apiKey, baseUrl });
}

const one = (parsed: Parsed, what: string): string => {
  const [, value, extra] = parsed.positionals;
  if (value === undefined) throw new UsageError(`${parsed.positionals[0]} needs ${what}`);
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
  return value;
};

/** A line on stderr that says what is happening while the command waits. */
function progress(io: Io, quiet: boolean) {
  let last = '';
  const started = Date.now();
  return {
    show(text: string) {
      if (quiet) return;
      if (io.tty) {
        io.stderr(`\r\x1b[2K${text} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      } else if (text !== last) {
        io.stderr(`${text}\n`);
      }
      last = text;
    },
    done() {
      if (!quiet && io.tty && last) io.stderr('\r\x1b[2K');
    },
  };
}

/** The service's bounds of a document (docs/api.md, "HTML and Markdown"), in bytes. */
const DOCUMENT_BYTES = { html: 1024 * 1024, markdown: 256 * 1024 } as const;

/** A document file's text, or stdin's for `-`; a file over the bound is refused unread. */
async function readDocument(
  kind: keyof typeof DOCUMENT_BYTES,
  path: string,
  io: Io,
): Promise<string> {
  const max = DOCUMENT_BYTES[kind];
  const limit = `${kind} may be at most ${max / 1024} KiB`;
  if (path === '-') {
    const text = await (io.stdin ?? (() => Promise.resolve('')))();
    if (Buffer.byteLength(text) > max) throw new UsageError(`stdin: ${limit}`);
    return text;
  }
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    throw new UsageError(`--${kind}-file: cannot read ${path}`);
  }
  if (size > max) throw new UsageError(`${path} is ${size} bytes: ${limit}`);
  return readFile(path, 'utf8');
}

/** What the capture shows: the URL argument, or a document from --html-file/--markdown-file. */
async function captureSource(
  parsed: Parsed,
  io: Io,
): Promise<{ what: string; source: Record<string, string> }> {
  const htmlFile = parsed.flags.get('html-file');
  const markdownFile = parsed.flags.get('markdown-file');
  const base = parsed.flags.get('document-base-url');
  const files = [htmlFile, markdownFile].filter((f) => typeof f === 'string');
  if (files.length === 0) {
    if (base !== undefined) {
      throw new UsageError('--document-base-url goes with --html-file or --markdown-file');
    }
    const url = one(parsed, 'a URL (or --html-file / --markdown-file)');
    return { what: url, source: { url } };
  }
  if (files.length > 1) throw new UsageError('give one of --html-file or --markdown-file');
  const extra = parsed.positionals[1];
  if (extra !== undefined) {
    throw new UsageError(`unexpected argument "${extra}" (the document is the page)`);
  }
  const kind = typeof htmlFile === 'string' ? 'html' : 'markdown';
  const file = String(htmlFile ?? markdownFile);
  const source: Record<string, string> = { [kind]: await readDocument(kind, file, io) };
  if (typeof base === 'string') source.base_url = base;
  return { what: file === '-' ? `${kind} from stdin` : file, source };
}

async function capture(parsed: Parsed, io: Io): Promise<void> {
  const { what, source } = await captureSource(parsed, io);
  const api = client(parsed, io);
  const options = { ...parsed.options, ...source } as CaptureOptions;
  const output = parsed.flags.get('output') ?? parsed.flags.get('o');
  const json = parsed.flags.has('json');
  const line = progress(io, parsed.flags.has('quiet'));
  if (parsed.flags.has('async')) {
    const hook = parsed.flags.get('webhook-url');
    const job = await api.queue(options, typeof hook === 'string' ? hook : undefined);
    line.show(`queued ${printable(job.id)}`);
    const done: ScreenshotStatus = await api.wait(job.id, {
      onStatus: (s) => line.show(`${printable(s.status)} ${printable(job.id)}`),
    });
    line.done();
    if (done.status === 'failed') {
      throw new ShotsmithError({
        status: 0,
        code: String(done.code ?? 'internal_error'),
        message: `job ${job.id} failed: ${String(done.error)}`,
      });
    }
    if (typeof output === 'string') await writeFile(output, await download(done));
    io.stdout(json ? printJson(done) : `${printable(done.image_url)}\n`);
    return;
  }
  line.show(`capturing ${printable(what)}`);
  if (typeof output === 'string') {
    const image = await api.captureImage(options);
    line.done();
    await writeFile(output, image.bytes);
    const { bytes, ...facts } = image;
    io.stdout(
      json
        ? printJson({ ...facts, file: output, size: bytes.length })
        : `${printable(output)} (${bytes.length} bytes, ${printable(image.contentType)}) ${printable(image.imageUrl)}\n`,
    );
    return;
  }
  const result = await api.capture(options);
  line.done();
  io.stdout(json ? printJson(result) : `${printable(result.image_url)}\n`);
}

/**
 * The finished job's image, checked before anything is written: a file must only ever hold
 * the image, never an error page or a half-read body.
 */
async function download(done: ScreenshotStatus): Promise<Uint8Array> {
  const where = String(done.image_url ?? '');
  if (!/^https?:\/\//.test(where)) {
    throw new ShotsmithError({
      status: 0,
      code: 'internal_error',
      message: `the finished job has no image URL (got "${where}")`,
    });
  }
  let res: Response;
  try {
    res = await fetch(where, { redirect: 'error', signal: AbortSignal.timeout(120_000) });
  } catch (err) {
    throw new ShotsmithError({
      status: 0,
      code: 'network_error',
      message: `could not download ${where}: ${err instanceof Error ? err.message : String(err)}`,
    });
  }
  if (!res.ok) throw await ShotsmithError.fromResponse(res);
  const type = res.headers.get('content-type') ?? '';
  if (!/^(image\/|application\/pdf)/.test(type)) {
    await res.body?.cancel();
    throw new ShotsmithError({
      status: res.status,
      code: 'internal_error',
      message: `${where} answered ${type || 'no content type'}, not an image`,
    });
  }
  return new Uint8Array(await res.arrayBuffer());
}

/** The most URLs one batch takes (the API's bound; the service says so too). */
const BATCH_MAX = 50;
/** A URL file larger than this is not a list of at most 50 URLs. */
const BATCH_FILE_MAX_BYTES = 1024 * 1024;

/** The URLs of a batch file: one a line, blank lines and `#` comments skipped. */
export function batchUrls(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

async function readBatchFile(file: string): Promise<string[]> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch (err) {
    throw new UsageError(
      `cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  if (size > BATCH_FILE_MAX_BYTES) {
    throw new UsageError(`${file} is larger than 1 MiB; a batch takes at most ${BATCH_MAX} URLs`);
  }
  const urls = batchUrls(await readFile(file, 'utf8'));
  if (urls.length === 0) throw new UsageError(`${file} has no URLs (one a line, # for comments)`);
  if (urls.length > BATCH_MAX) {
    throw new UsageError(
      `${file} has ${urls.length} URLs; a batch takes at most ${BATCH_MAX} (split the file)`,
    );
  }
  return urls;
}

async function batch(parsed: Parsed, io: Io): Promise<void> {
  const file = one(parsed, 'a file of URLs');
  const urls = await readBatchFile(file);
  const api = client(parsed, io);
  const hook = parsed.flags.get('webhook-url');
  const json = parsed.flags.has('json');
  const queued = await api.batch(
    urls.map((url) => ({ ...parsed.options, url }) as CaptureOptions),
    typeof hook === 'string' ? hook : undefined,
  );
  if (!parsed.flags.has('wait')) {
    if (json) io.stdout(printJson(queued));
    else {
      io.stdout(`batch ${printable(queued.batch_id)}\n`);
      for (const [i, job] of queued.jobs.entries()) {
        io.stdout(`${printable(job.id)}\t${printable(urls[i])}\n`);
      }
    }
    return;
  }
  const line = progress(io, parsed.flags.has('quiet'));
  line.show(`queued ${printable(queued.batch_id)}: ${urls.length} captures`);
  const done: BatchStatus = await api.waitBatch(queued.batch_id, {
    onStatus: (b) =>
      line.show(
        `${printable(queued.batch_id)}: ${b.succeeded + b.failed} of ${b.total} ended (${b.failed} failed)`,
      ),
  });
  line.done();
  if (json) io.stdout(printJson(done));
  else {
    io.stdout(
      `batch ${printable(done.batch_id)}: ${done.succeeded} succeeded, ${done.failed} failed\n`,
    );
    for (const [i, job] of done.jobs.entries()) {
      const outcome = job.status === 'succeeded' ? job.image_url : `${job.code}: ${job.error}`;
      io.stdout(
        `${[job.id, job.status, urls[i], outcome].map((c) => printable(c ?? '')).join('\t')}\n`,
      );
    }
  }
  if (done.failed > 0) {
    throw new ShotsmithError({
      status: 0,
      code: 'target_error',
      message: `${done.failed} of the batch's ${done.total} captures failed`,
    });
  }
}

async function link(parsed: Parsed, io: Io): Promise<void> {
  const url = one(parsed, 'a URL');
  const keyId = Number(parsed.flags.get('key-id'));
  if (!Number.isInteger(keyId) || keyId < 1)
    throw new UsageError("link needs --key-id N (the API key's id)");
  const secret = io.env.SHOTSMITH_SIGNING_SECRET ?? '';
  if (!secret.startsWith('sig_live_')) {
    throw new UsageError("link needs SHOTSMITH_SIGNING_SECRET (the key's sig_live_... secret)");
  }
  const expiresIn = Number(parsed.flags.get('expires-in') ?? 3600);
  if (!Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > 7 * 24 * 3600) {
    throw new UsageError('--expires-in takes 1 to 604800 seconds');
  }
  for (const [name, value] of Object.entries(parsed.options)) {
    if (typeof value === 'object' && !Array.isArray(value)) {
      throw new UsageError(
        `${flagName(name)} is an object, and a render link cannot carry objects`,
      );
    }
  }
  const baseUrl = String(
    parsed.flags.get('base-url') ?? io.env.SHOTSMITH_URL ?? 'http://localhost:8080',
  );
  io.stdout(
    `${await renderLink({
      baseUrl,
      keyId,
      signingSecret: secret,
      options: { ...(parsed.options as Record<string, LinkOptionValue>), url },
      expires: Math.floor(Date.now() / 1000) + expiresIn,
    })}\n`,
  );
}

export async function run(argv: readonly string[], io: Io): Promise<number> {
  try {
    const parsed = parseArgs(argv);
    const command = parsed.positionals[0];
    if (
      command === undefined ||
      command === 'help' ||
      parsed.flags.has('help') ||
      parsed.flags.has('h')
    ) {
      io.stdout(HELP);
      return command === undefined && !parsed.flags.has('help') && !parsed.flags.has('h')
        ? EXIT.usage
        : EXIT.ok;
    }
    const json = parsed.flags.has('json');
    switch (command) {
      case 'capture':
        await capture(parsed, io);
        break;
      case 'batch':
        await batch(parsed, io);
        break;
      case 'usage': {
        const u = await client(parsed, io).usage();
        io.stdout(
          json
            ? printJson(u)
            : `${printable(
                `${u.plan}: ${u.used} of ${u.limit} used this month, ${u.remaining} left; resets ${u.resets_at}`,
              )}\n`,
        );
        break;
      }
      case 'list': {
        const limit = parsed.flags.get('limit');
        const cursor = parsed.flags.get('cursor');
        const page = await client(parsed, io).list({
          ...(typeof limit === 'string' ? { limit: Number(limit) } : {}),
          ...(typeof cursor === 'string' ? { cursor } : {}),
        });
        if (json) io.stdout(printJson(page));
        else {
          for (const s of page.data) {
            const cells = [
              s.id,
              s.created_at,
              `${s.format} ${s.width}x${s.height}`,
              s.url,
              s.image_url,
            ];
            io.stdout(`${cells.map(printable).join('\t')}\n`);
          }
          if (page.next_cursor) {
            io.stderr(`more: shotsmith list --cursor ${printable(page.next_cursor)}\n`);
          }
        }
        break;
      }
      case 'delete': {
        const id = one(parsed, 'a screenshot id');
        if (!/^[1-9][0-9]*$/.test(id)) throw new UsageError(`"${id}" is not a screenshot id`);
        await client(parsed, io).delete(Number(id));
        io.stdout(json ? '{"deleted":true}\n' : `deleted ${id}\n`);
        break;
      }
      case 'link':
        await link(parsed, io);
        break;
      default:
        throw new UsageError(`unknown command "${command}" (shotsmith help lists them)`);
    }
    return EXIT.ok;
  } catch (err) {
    return report(err, io);
  }
}

function report(err: unknown, io: Io): number {
  if (err instanceof UsageError) {
    io.stderr(`shotsmith: ${err.message}\n`);
    return EXIT.usage;
  }
  if (err instanceof ShotsmithError) {
    const extra =
      err.resetsAt !== null
        ? ` (resets ${err.resetsAt})`
        : err.retryAfter !== null
          ? ` (retry after ${err.retryAfter} s)`
          : '';
    io.stderr(
      `shotsmith: ${printable(`${err.message}${extra} [${err.status || 'no answer'} ${err.code}]`)}\n`,
    );
    if (err.code === 'network_error' || err.code === 'unexpected_redirect') return EXIT.network;
    if (err.status === 401 || err.status === 403) return EXIT.unauthorized;
    if (err.status === 402 || err.status === 429) return EXIT.limited;
    if (err.status >= 400 && err.status < 500) return EXIT.refused;
    return EXIT.unavailable;
  }
  io.stderr(`shotsmith: ${printable(err instanceof Error ? err.message : String(err))}\n`);
  return EXIT.failure;
}

if (import.meta.main) {
  process.exitCode = await run(process.argv.slice(2), {
    env: process.env,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    tty: Boolean(process.stderr.isTTY),
    stdin: async () => {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of process.stdin) {
        chunks.push(chunk as Buffer);
        size += (chunk as Buffer).length;
        // Past the largest document: enough to refuse it, without reading the rest.
        if (size > DOCUMENT_BYTES.html) break;
      }
      return Buffer.concat(chunks).toString('utf8');
    },
  });
}
