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
import type {
  BatchStatus,
  CaptureOptions,
  Monitor,
  MonitorRequest,
  MonitorRun,
  ScreenshotStatus,
  StorageDestination,
  StorageDestinationRequest,
} from './types.ts';

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
  /** The service, the target, the proxy or the caller's bucket failed (5xx, a failed async job). */
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
  /** CLI flags given once per value (--ignore-selector A --ignore-selector B). */
  lists: Map<string, string[]>;
  /** Capture options, by field name, typed. */
  options: Record<string, unknown>;
}

const CLI_FLAGS: Record<string, 'value' | 'switch' | 'list'> = {
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
  // shotsmith monitor
  every: 'value',
  name: 'value',
  threshold: 'value',
  'ignore-selector': 'list',
  changed: 'switch',
  // shotsmith destinations add
  endpoint: 'value',
  region: 'value',
  bucket: 'value',
  prefix: 'value',
  'access-key-id': 'value',
  'secret-access-key-file': 'value',
  'path-style': 'switch',
  acl: 'value',
  help: 'switch',
  h: 'switch',
};

/** `--geolocation`'s form besides JSON, in the words of its errors. */
const GEOLOCATION_FORM = 'LAT,LON[,ACCURACY] (degrees, degrees, metres), e.g. 52.52,13.405';

/** `--geolocation 52.52,13.405[,50]` as the API's `{latitude, longitude, accuracy?}`. */
function parseGeolocation(text: string): {
  latitude: number;
  longitude: number;
  accuracy?: number;
} {
  const parts = text.split(',').map((part) => part.trim());
  const numbers = parts.map(Number);
  if (
    (parts.length !== 2 && parts.length !== 3) ||
    parts.some((part) => part === '') ||
    !numbers.every(Number.isFinite)
  ) {
    throw new UsageError(`--geolocation takes ${GEOLOCATION_FORM}, not "${text}"`);
  }
  const [latitude, longitude, accuracy] = numbers as [number, number, number | undefined];
  // Where a point can be on Earth; the service bounds the accuracy.
  if (Math.abs(latitude) > 90) {
    throw new UsageError(`--geolocation: the latitude is from -90 to 90, not ${latitude}`);
  }
  if (Math.abs(longitude) > 180) {
    throw new UsageError(`--geolocation: the longitude is from -180 to 180, not ${longitude}`);
  }
  if (accuracy !== undefined && accuracy < 0) {
    throw new UsageError(`--geolocation: the accuracy is metres, 0 or more, not ${accuracy}`);
  }
  return { latitude, longitude, ...(accuracy === undefined ? {} : { accuracy }) };
}

function typed(field: string, type: FieldType, text: string): unknown {
  const flag = flagName(field);
  // The one object with a shorter form than JSON.
  if (field === 'geolocation' && !text.trim().startsWith('{')) return parseGeolocation(text);
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
  const parsed: Parsed = { positionals: [], flags: new Map(), lists: new Map(), options: {} };
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
    if (own === 'list') {
      parsed.lists.set(name, [...(parsed.lists.get(name) ?? []), next()]);
      continue;
    }
    if (own !== undefined) {
      // A switch keeps an inline value (`--path-style=false`) for the one that reads it;
      // for every other switch, being given is what counts.
      parsed.flags.set(name, own === 'switch' ? (inline ?? true) : next());
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
  shotsmith monitor create|list|get|runs|run|pause|resume|delete ... (Pro; shotsmith help monitor)
  shotsmith destinations list|add|test|delete ... (Pro; shotsmith help destinations)
  shotsmith help [monitor|destinations]

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
limit, 5 request refused (400/404), 6 service, target, proxy or your bucket failed,
7 service unreachable.

Capture options (booleans are switches; lists repeat the flag; objects take JSON;
--geolocation also takes ${GEOLOCATION_FORM}):
${Object.entries(FIELDS)
  .filter(([name]) => !OWN_FIELDS.has(name))
  .map(([name, spec]) => `  ${flagName(name).padEnd(26)} ${spec.type.padEnd(8)} ${spec.help}`)
  .join('\n')}
`;

/** The largest page the listings answer (the API's `limit` maximum). */
const MAX_PAGE = 100;
/** `monitor runs --changed` reads at most this many pages looking for changed runs. */
const CHANGED_SCAN_PAGES = 10;

const MONITOR_HELP = `shotsmith monitor: pages captured on a schedule and compared with their last image (Pro)

Usage:
  shotsmith monitor create <url> --every 15m|1h|6h|1d|7d [--name NAME] [--threshold F]
      [--ignore-selector CSS ...] [--webhook-url URL] [capture options, e.g. --width 1280]
  shotsmith monitor create --html-file FILE [--document-base-url URL] --every ... [...]
  shotsmith monitor list [--limit N] [--cursor C]
  shotsmith monitor get <id>
  shotsmith monitor runs <id> [--changed] [--limit N] [--cursor C]
  shotsmith monitor run <id> [--wait]
  shotsmith monitor pause <id>
  shotsmith monitor resume <id>
  shotsmith monitor delete <id>

Every command takes --json (the API's answer as JSON) instead of the table.

create: --every is how often it runs (not below the plan's min_monitor_interval);
--threshold the share of pixels (0.0001 to 1, default 0.001) that must change for a run to
count as changed; --ignore-selector hides an element (a clock, an ad) before each capture
(repeat it for more); --webhook-url receives monitor.changed and monitor.failed events. The
capture options are those of shotsmith capture (shotsmith help lists them), except --format
pdf. The monitor's id (mon_...) is printed first.

runs: newest first. --changed shows only the runs that found a change, reading at most
${CHANGED_SCAN_PAGES} pages of ${MAX_PAGE} runs to find --limit of them (default 20).
run: a run now (one capture, one unit of quota); its slot in the schedule stays. --wait
waits until it ends and prints whether it found a change (exit 6 if the run failed).
pause stops its runs; resume starts them again (also after status paused_quota, once the
month has quota again).

docs/monitors.md explains thresholds, scheduling and the webhook events.
`;

const DESTINATIONS_HELP = `shotsmith destinations: your own S3-compatible buckets captures are written into (Pro)

Usage:
  shotsmith destinations list
  shotsmith destinations add --name NAME --region REGION --bucket BUCKET [--endpoint URL]
      [--prefix PREFIX] [--access-key-id ID] [--secret-access-key-file FILE|-]
      [--path-style[=false]] [--acl private|public-read]
  shotsmith destinations test <id>
  shotsmith destinations delete <id>

Every command takes --json (the API's answer as JSON) instead of the table.

add: the service writes a test object into the bucket and deletes it again before it saves
anything; a bucket that refuses is exit 5 with the provider's code (AccessDenied,
NoSuchBucket, ...). --endpoint is an S3-compatible store's https://host[:port] (R2, MinIO;
none for AWS S3), --region its region (auto for R2). The access key id comes from
--access-key-id or SHOTSMITH_STORAGE_ACCESS_KEY_ID, the secret from
SHOTSMITH_STORAGE_SECRET_ACCESS_KEY or --secret-access-key-file (- reads stdin), never from
the command line, where other users of the machine can read it. --path-style defaults to
true with an --endpoint, false for AWS; --acl to private. The destination's id (dst_...)
is printed first.

test: the same test write again. delete: the destination is forgotten; the objects in the
bucket stay.

A capture writes into one with --storage '{"destination":"dst_...","path":"{host}/{id}.{ext}"}'
(add "hosted":false to keep no copy on the service). docs/destinations.md has the details.
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
  // Whoever holds the link would read the proxy's credentials in it; the service refuses it.
  if (String(parsed.options.proxy ?? '').includes('://')) {
    throw new UsageError(
      "--proxy in a render link names one of the service's proxies by id, not a URL (its credentials would be in the link)",
    );
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

/** How often a monitor may run: the API's `every` values. */
const EVERY = ['15m', '1h', '6h', '1d', '7d'] as const;
// Fails to compile when the API gains a value this list lacks.
const EVERY_COMPLETE: Exclude<MonitorRequest['every'], (typeof EVERY)[number]> extends never
  ? true
  : false = true;
void EVERY_COMPLETE;

const MONITOR_COMMANDS = ['create', 'list', 'get', 'runs', 'run', 'pause', 'resume', 'delete'];
/** Between reads of a run that `monitor run --wait` waits for. */
const RUN_POLL_MS = 1000;
/** `monitor run --wait` gives up after this long (a run is one capture, bounded far below). */
const RUN_WAIT_MS = 5 * 60_000;

/** `monitor <sub> <id>`: the id, checked, and nothing after it. */
function monitorId(parsed: Parsed): string {
  const [, sub, id, extra] = parsed.positionals;
  if (id === undefined) throw new UsageError(`monitor ${sub} needs a monitor id (mon_...)`);
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
  if (!/^mon_[0-9A-Za-z]{1,60}$/.test(id)) {
    throw new UsageError(
      `"${id}" is not a monitor id (mon_..., shotsmith monitor list shows them)`,
    );
  }
  return id;
}

/** A page option of the listings: a whole number from 1 to the API's maximum. */
function pageLimit(parsed: Parsed): number | undefined {
  const limit = parsed.flags.get('limit');
  if (limit === undefined) return undefined;
  const n = Number(limit);
  if (typeof limit !== 'string' || !/^[0-9]+$/.test(limit) || n < 1 || n > MAX_PAGE) {
    throw new UsageError(`--limit takes a whole number from 1 to ${MAX_PAGE}, not "${limit}"`);
  }
  return n;
}

const cursorFlag = (parsed: Parsed) => {
  const cursor = parsed.flags.get('cursor');
  return typeof cursor === 'string' ? { cursor } : {};
};

/** A table: a header row, then each row, columns padded to their widest cell. */
function table(header: string[], rows: string[][]): string {
  const cells = [header, ...rows].map((row) => row.map((c) => printable(c)));
  const widths = header.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells
    .map((row) =>
      row
        .map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

const target = (m: Monitor) => m.url ?? `(html, ${m.html_bytes ?? 0} bytes)`;
const when = (iso: string | null) => (iso === null ? '-' : iso.replace(/\.\d{3}Z$/, 'Z'));
const percent = (fraction: number | null) =>
  fraction === null
    ? '-'
    : fraction === 0
      ? '0%'
      : `${(fraction * 100).toFixed(fraction < 0.001 ? 3 : 2)}%`;

/** One monitor as `field: value` lines. */
function monitorLines(m: Monitor): string {
  const rows: Array<[string, string]> = [
    ['id', m.id],
    ['name', m.name ?? '-'],
    ['target', target(m)],
    ['status', m.status],
    ['every', m.every],
    ['threshold', `${m.threshold} (${percent(m.threshold)} of pixels)`],
    ['ignore', m.ignore_selectors.length > 0 ? m.ignore_selectors.join(', ') : '-'],
    ['options', Object.keys(m.options).length > 0 ? JSON.stringify(m.options) : '-'],
    ['webhook', m.webhook_url ?? '-'],
    ['next run', when(m.next_run_at)],
    ['last run', when(m.last_run_at)],
    ['last change', when(m.last_change_at)],
    ['created', when(m.created_at)],
  ];
  return rows.map(([k, v]) => `${`${k}:`.padEnd(13)}${printable(v)}\n`).join('');
}

const RUN_HEADER = ['RUN', 'AT', 'STATUS', 'CHANGED', 'PIXELS', 'IMAGE / DIFF / ERROR'];
function runRow(r: MonitorRun): string[] {
  const changed = r.changed === null ? '-' : r.changed ? 'yes' : 'no';
  const detail =
    r.status === 'failed'
      ? (r.error ?? 'failed')
      : [r.image_url ?? '', r.diff_url ?? ''].filter(Boolean).join(' ');
  return [r.id, when(r.at), r.status, changed, percent(r.changed_fraction), detail];
}

/** How a finished run ended, in one line. */
function runOutcome(r: MonitorRun): string {
  if (r.status === 'failed') return `run ${r.id} failed: ${r.error ?? 'no reason given'}`;
  const what = r.changed
    ? `changed (${percent(r.changed_fraction)} of pixels)`
    : `no change (${percent(r.changed_fraction)} of pixels differ)`;
  const lines = [`run ${r.id} succeeded: ${what}`, `image: ${r.image_url ?? '-'}`];
  if (r.diff_url) lines.push(`diff:  ${r.diff_url}`);
  return lines.map((l) => `${printable(l)}\n`).join('');
}

/** The body of POST /v1/monitors from `monitor create`'s arguments. */
async function monitorRequest(parsed: Parsed, io: Io): Promise<MonitorRequest> {
  if (parsed.flags.has('markdown-file')) {
    throw new UsageError('a monitor watches a URL or an HTML document (--html-file), not Markdown');
  }
  const every = parsed.flags.get('every');
  if (every === undefined) {
    throw new UsageError(`monitor create needs --every (${EVERY.join(', ')})`);
  }
  if (!(EVERY as readonly unknown[]).includes(every)) {
    throw new UsageError(`--every takes ${EVERY.join(', ')}, not "${String(every)}"`);
  }
  if (!parsed.flags.has('html-file') && parsed.positionals[2] === undefined) {
    throw new UsageError('monitor create needs a URL (or --html-file FILE)');
  }
  // captureSource reads the first positional after the command: here that is `create`.
  const { source } = await captureSource(
    { ...parsed, positionals: parsed.positionals.slice(1) },
    io,
  );
  const { base_url, ...target } = source;
  const options = { ...parsed.options, ...(base_url === undefined ? {} : { base_url }) };
  const body: Record<string, unknown> = { ...target, every };
  const name = parsed.flags.get('name');
  if (typeof name === 'string') body.name = name;
  const threshold = parsed.flags.get('threshold');
  if (typeof threshold === 'string') {
    const n = Number(threshold);
    if (threshold.trim() === '' || !Number.isFinite(n)) {
      throw new UsageError(`--threshold takes a number from 0.0001 to 1, not "${threshold}"`);
    }
    body.threshold = n;
  }
  const ignore = parsed.lists.get('ignore-selector');
  if (ignore !== undefined) body.ignore_selectors = ignore;
  const hook = parsed.flags.get('webhook-url');
  if (typeof hook === 'string') body.webhook_url = hook;
  if (Object.keys(options).length > 0) body.options = options;
  return body as MonitorRequest;
}

/** The changed runs among a monitor's newest, reading a bounded number of pages. */
async function changedRuns(
  api: Shotsmith,
  id: string,
  want: number,
  start: { cursor?: string },
): Promise<{ runs: MonitorRun[]; next_cursor: string | null }> {
  const runs: MonitorRun[] = [];
  let cursor = start.cursor;
  for (let pages = 0; pages < CHANGED_SCAN_PAGES; pages++) {
    const page = await api.monitors.runs(id, {
      limit: MAX_PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const run of page.data) if (run.changed === true && runs.length < want) runs.push(run);
    if (!page.next_cursor) return { runs, next_cursor: null };
    cursor = page.next_cursor;
    if (runs.length >= want) break;
  }
  return { runs, next_cursor: cursor ?? null };
}

/** Reads the monitor's runs until `runId` has ended. */
async function waitForRun(
  api: Shotsmith,
  id: string,
  runId: string,
  onRead: () => void,
): Promise<MonitorRun> {
  const end = Date.now() + RUN_WAIT_MS;
  for (;;) {
    // The run is among the newest: only a run started since could come before it.
    const page = await api.monitors.runs(id, { limit: MAX_PAGE });
    const run = page.data.find((r) => r.id === runId);
    if (run === undefined) {
      throw new ShotsmithError({
        status: 0,
        code: 'not_found',
        message: `run ${runId} is not among monitor ${id}'s newest runs`,
      });
    }
    onRead();
    if (run.status !== 'running') return run;
    if (Date.now() > end) {
      throw new ShotsmithError({
        status: 0,
        code: 'timeout',
        message: `run ${runId} is still running after ${RUN_WAIT_MS / 60_000} minutes`,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, RUN_POLL_MS));
  }
}

async function monitor(parsed: Parsed, io: Io): Promise<void> {
  const sub = parsed.positionals[1];
  if (sub === undefined) {
    throw new UsageError(
      `monitor needs a command: ${MONITOR_COMMANDS.join(', ')} (shotsmith help monitor)`,
    );
  }
  if (!MONITOR_COMMANDS.includes(sub)) {
    throw new UsageError(
      `unknown monitor command "${sub}": one of ${MONITOR_COMMANDS.join(', ')} (shotsmith help monitor)`,
    );
  }
  if (sub !== 'create') {
    const stray = [
      ...Object.keys(parsed.options).map(flagName),
      ...['every', 'name', 'threshold', 'ignore-selector', 'webhook-url', 'html-file']
        .filter((f) => parsed.flags.has(f) || parsed.lists.has(f))
        .map((f) => `--${f}`),
    ];
    if (stray.length > 0) {
      throw new UsageError(`${stray[0]} goes with monitor create, not monitor ${sub}`);
    }
  }
  if (parsed.flags.has('changed') && sub !== 'runs') {
    throw new UsageError(`--changed goes with monitor runs, not monitor ${sub}`);
  }
  if (parsed.flags.has('wait') && sub !== 'run') {
    throw new UsageError(`--wait goes with monitor run, not monitor ${sub}`);
  }
  const json = parsed.flags.has('json');
  switch (sub) {
    case 'create': {
      const body = await monitorRequest(parsed, io);
      const made = await client(parsed, io).monitors.create(body);
      io.stdout(json ? printJson(made) : monitorLines(made));
      return;
    }
    case 'list': {
      if (parsed.positionals.length > 2) {
        throw new UsageError(`unexpected argument "${parsed.positionals[2]}"`);
      }
      const limit = pageLimit(parsed);
      const page = await client(parsed, io).monitors.list({
        ...(limit === undefined ? {} : { limit }),
        ...cursorFlag(parsed),
      });
      if (json) {
        io.stdout(printJson(page));
        return;
      }
      io.stdout(
        table(
          ['ID', 'STATUS', 'EVERY', 'LAST RUN', 'LAST CHANGE', 'NAME', 'TARGET'],
          page.data.map((m) => [
            m.id,
            m.status,
            m.every,
            when(m.last_run_at),
            when(m.last_change_at),
            m.name ?? '-',
            target(m),
          ]),
        ),
      );
      if (page.next_cursor) {
        io.stderr(`more: shotsmith monitor list --cursor ${printable(page.next_cursor)}\n`);
      }
      return;
    }
    case 'get': {
      const id = monitorId(parsed);
      const m = await client(parsed, io).monitors.get(id);
      io.stdout(json ? printJson(m) : monitorLines(m));
      return;
    }
    case 'runs': {
      const id = monitorId(parsed);
      const limit = pageLimit(parsed);
      const api = client(parsed, io);
      const page = parsed.flags.has('changed')
        ? await changedRuns(api, id, limit ?? 20, cursorFlag(parsed)).then((p) => ({
            data: p.runs,
            next_cursor: p.next_cursor,
          }))
        : await api.monitors.runs(id, {
            ...(limit === undefined ? {} : { limit }),
            ...cursorFlag(parsed),
          });
      if (json) {
        io.stdout(printJson(page));
        return;
      }
      io.stdout(table(RUN_HEADER, page.data.map(runRow)));
      if (page.next_cursor) {
        const changed = parsed.flags.has('changed') ? ' --changed' : '';
        io.stderr(
          `more: shotsmith monitor runs ${id}${changed} --cursor ${printable(page.next_cursor)}\n`,
        );
      }
      return;
    }
    case 'run': {
      const id = monitorId(parsed);
      const api = client(parsed, io);
      const started = await api.monitors.run(id);
      if (!parsed.flags.has('wait')) {
        io.stdout(json ? printJson(started) : `${printable(started.id)} running\n`);
        return;
      }
      const line = progress(io, parsed.flags.has('quiet'));
      line.show(`running ${printable(started.id)}`);
      const ended = await waitForRun(api, id, started.id, () =>
        line.show(`running ${printable(started.id)}`),
      );
      line.done();
      io.stdout(json ? printJson(ended) : runOutcome(ended));
      if (ended.status === 'failed') {
        throw new ShotsmithError({
          status: 0,
          code: 'target_error',
          message: `run ${ended.id} failed: ${ended.error ?? 'no reason given'}`,
        });
      }
      return;
    }
    case 'pause':
    case 'resume': {
      const id = monitorId(parsed);
      const m = await client(parsed, io).monitors.update(id, {
        status: sub === 'pause' ? 'paused' : 'active',
      });
      io.stdout(
        json
          ? printJson(m)
          : `${printable(
              sub === 'pause'
                ? `paused ${m.id}`
                : `resumed ${m.id}: next run at ${when(m.next_run_at)}`,
            )}\n`,
      );
      return;
    }
    case 'delete': {
      const id = monitorId(parsed);
      await client(parsed, io).monitors.delete(id);
      io.stdout(json ? '{"deleted":true}\n' : `deleted ${id}\n`);
      return;
    }
  }
}

const DESTINATION_COMMANDS = ['list', 'add', 'test', 'delete'];
/** The flags `destinations add` reads, refused with the other destination commands. */
const ADD_FLAGS = [
  'name',
  'endpoint',
  'region',
  'bucket',
  'prefix',
  'access-key-id',
  'secret-access-key-file',
  'path-style',
  'acl',
];
/** The secret is read whole from a file or stdin: no store's secret comes near this. */
const SECRET_FILE_MAX_BYTES = 4096;

/** Flags only some commands read, each refused elsewhere rather than ignored. */
const COMMAND_FLAGS: Record<string, readonly string[]> = {
  every: ['monitor'],
  threshold: ['monitor'],
  'ignore-selector': ['monitor'],
  changed: ['monitor'],
  name: ['monitor', 'destinations'],
  ...Object.fromEntries(ADD_FLAGS.filter((f) => f !== 'name').map((f) => [f, ['destinations']])),
};

/** `destinations <sub> <id>`: the id, checked, and nothing after it. */
function destinationId(parsed: Parsed): string {
  const [, sub, id, extra] = parsed.positionals;
  if (id === undefined) {
    throw new UsageError(`destinations ${sub} needs a destination id (dst_...)`);
  }
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
  if (!/^dst_[0-9A-Za-z]{1,60}$/.test(id)) {
    throw new UsageError(
      `"${id}" is not a destination id (dst_..., shotsmith destinations list shows them)`,
    );
  }
  return id;
}

/** The secret access key: from the environment, or a file (or stdin), one line. */
async function secretAccessKey(parsed: Parsed, io: Io): Promise<string> {
  const file = parsed.flags.get('secret-access-key-file');
  if (typeof file !== 'string') {
    const secret = io.env.SHOTSMITH_STORAGE_SECRET_ACCESS_KEY ?? '';
    if (secret === '') {
      throw new UsageError(
        'destinations add needs the secret access key: set SHOTSMITH_STORAGE_SECRET_ACCESS_KEY or pass --secret-access-key-file FILE (- for stdin)',
      );
    }
    return secret;
  }
  let text: string;
  if (file === '-') {
    text = await (io.stdin ?? (() => Promise.resolve('')))();
  } else {
    try {
      if ((await stat(file)).size > SECRET_FILE_MAX_BYTES) {
        throw new UsageError(`${file} is larger than a secret access key`);
      }
      text = await readFile(file, 'utf8');
    } catch (err) {
      if (err instanceof UsageError) throw err;
      throw new UsageError(`--secret-access-key-file: cannot read ${file}`);
    }
  }
  // The newline `echo` or an editor ends the file with is not part of the secret.
  const secret = text.replace(/\r?\n$/, '');
  if (secret === '') throw new UsageError(`--secret-access-key-file ${file} is empty`);
  if (/[\r\n]/.test(secret)) {
    throw new UsageError(`--secret-access-key-file ${file} holds more than one line`);
  }
  return secret;
}

/** The body of POST /v1/storage-destinations from `destinations add`'s flags. */
async function destinationRequest(parsed: Parsed, io: Io): Promise<StorageDestinationRequest> {
  if (parsed.positionals.length > 2) {
    throw new UsageError(`unexpected argument "${parsed.positionals[2]}" (add takes flags only)`);
  }
  const value = (flag: string): string | undefined => {
    const v = parsed.flags.get(flag);
    return typeof v === 'string' ? v : undefined;
  };
  const missing = ['name', 'region', 'bucket'].filter((f) => value(f) === undefined);
  if (missing.length > 0) {
    throw new UsageError(`destinations add needs ${missing.map((f) => `--${f}`).join(', ')}`);
  }
  const accessKeyId = value('access-key-id') ?? io.env.SHOTSMITH_STORAGE_ACCESS_KEY_ID ?? '';
  if (accessKeyId === '') {
    throw new UsageError(
      'destinations add needs the access key id: --access-key-id or SHOTSMITH_STORAGE_ACCESS_KEY_ID',
    );
  }
  const acl = value('acl');
  if (acl !== undefined && acl !== 'private' && acl !== 'public-read') {
    throw new UsageError(`--acl takes private or public-read, not "${acl}"`);
  }
  const pathStyle = parsed.flags.get('path-style');
  if (
    pathStyle !== undefined &&
    pathStyle !== true &&
    pathStyle !== 'true' &&
    pathStyle !== 'false'
  ) {
    throw new UsageError(`--path-style takes true or false, not "${pathStyle}"`);
  }
  const endpoint = value('endpoint');
  const prefix = value('prefix');
  return {
    name: value('name') as string,
    ...(endpoint === undefined ? {} : { endpoint }),
    region: value('region') as string,
    bucket: value('bucket') as string,
    ...(prefix === undefined ? {} : { prefix }),
    access_key_id: accessKeyId,
    secret_access_key: await secretAccessKey(parsed, io),
    ...(pathStyle === undefined ? {} : { path_style: pathStyle !== 'false' }),
    ...(acl === undefined ? {} : { acl }),
  };
}

/** One destination as `field: value` lines. */
function destinationLines(d: StorageDestination): string {
  const rows: Array<[string, string]> = [
    ['id', d.id],
    ['name', d.name],
    ['endpoint', d.endpoint ?? `AWS S3 (${d.region})`],
    ['region', d.region],
    ['bucket', d.bucket],
    ['prefix', d.prefix === '' ? '-' : d.prefix],
    ['path style', d.path_style ? 'yes' : 'no'],
    ['acl', d.acl],
    ['created', when(d.created_at)],
    ['tested', when(d.tested_at)],
  ];
  return rows.map(([k, v]) => `${`${k}:`.padEnd(12)}${printable(v)}\n`).join('');
}

async function destinations(parsed: Parsed, io: Io): Promise<void> {
  const sub = parsed.positionals[1];
  if (sub === undefined) {
    throw new UsageError(
      `destinations needs a command: ${DESTINATION_COMMANDS.join(', ')} (shotsmith help destinations)`,
    );
  }
  if (!DESTINATION_COMMANDS.includes(sub)) {
    throw new UsageError(
      `unknown destinations command "${sub}": one of ${DESTINATION_COMMANDS.join(', ')} (shotsmith help destinations)`,
    );
  }
  const option = Object.keys(parsed.options)[0];
  if (option !== undefined) {
    throw new UsageError(`${flagName(option)} is a capture option, not one of destinations ${sub}`);
  }
  if (sub !== 'add') {
    const stray = ADD_FLAGS.find((f) => parsed.flags.has(f));
    if (stray !== undefined) {
      throw new UsageError(`--${stray} goes with destinations add, not destinations ${sub}`);
    }
  }
  const json = parsed.flags.has('json');
  const api = () => client(parsed, io);
  switch (sub) {
    case 'list': {
      if (parsed.positionals.length > 2) {
        throw new UsageError(`unexpected argument "${parsed.positionals[2]}"`);
      }
      const list = await api().destinations.list();
      if (json) {
        io.stdout(printJson(list));
        return;
      }
      io.stdout(
        table(
          ['ID', 'NAME', 'BUCKET', 'ENDPOINT', 'PREFIX', 'TESTED'],
          list.data.map((d) => [
            d.id,
            d.name,
            d.bucket,
            d.endpoint ?? 'AWS S3',
            d.prefix === '' ? '-' : d.prefix,
            when(d.tested_at),
          ]),
        ),
      );
      return;
    }
    case 'add': {
      const body = await destinationRequest(parsed, io);
      const made = await api().destinations.create(body);
      io.stdout(json ? printJson(made) : destinationLines(made));
      return;
    }
    case 'test': {
      const tested = await api().destinations.test(destinationId(parsed));
      io.stdout(
        json
          ? printJson(tested)
          : `${printable(`tested ${tested.id}: the bucket took a test object (${when(tested.tested_at)})`)}\n`,
      );
      return;
    }
    case 'delete': {
      const id = destinationId(parsed);
      await api().destinations.delete(id);
      io.stdout(json ? '{"deleted":true}\n' : `deleted ${id}\n`);
      return;
    }
  }
}

export async function run(argv: readonly string[], io: Io): Promise<number> {
  try {
    const parsed = parseArgs(argv);
    const command = parsed.positionals[0];
    const wantsHelp = parsed.flags.has('help') || parsed.flags.has('h');
    if (
      (command === 'help' && parsed.positionals[1] === 'monitor') ||
      (command === 'monitor' && wantsHelp)
    ) {
      io.stdout(MONITOR_HELP);
      return EXIT.ok;
    }
    if (
      (command === 'help' && parsed.positionals[1] === 'destinations') ||
      (command === 'destinations' && wantsHelp)
    ) {
      io.stdout(DESTINATIONS_HELP);
      return EXIT.ok;
    }
    if (command === undefined || command === 'help' || wantsHelp) {
      io.stdout(HELP);
      return command === undefined && !parsed.flags.has('help') && !parsed.flags.has('h')
        ? EXIT.usage
        : EXIT.ok;
    }
    for (const [flag, commands] of Object.entries(COMMAND_FLAGS)) {
      if (commands.includes(command) || !(parsed.flags.has(flag) || parsed.lists.has(flag))) {
        continue;
      }
      const owners = commands.map((c) => `shotsmith ${c}`).join(' or ');
      throw new UsageError(`--${flag} goes with ${owners}, not ${command}`);
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
      case 'monitor':
        await monitor(parsed, io);
        break;
      case 'destinations':
        await destinations(parsed, io);
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
