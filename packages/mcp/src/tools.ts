/**
 * The tools: each declares its name, description and input JSON Schema (the capture and
 * monitor ones generated from the service's OpenAPI document, tool-schemas.ts) and answers a
 * call through the client library. A refusal of the service is thrown as a ShotsmithError and
 * becomes a tool error (server.ts), never a protocol error.
 */

import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  type CaptureOptions,
  type CaptureResult,
  type MonitorRequest,
  type Shotsmith,
  ShotsmithError,
} from '@shotsmith/client';
import {
  CAPTURE_OPTIONS_SCHEMA,
  MONITOR_REQUEST_SCHEMA,
  type ObjectSchema,
} from './tool-schemas.ts';

/**
 * The longest side of an image handed to the model. Larger images are downscaled by the
 * service itself (`image_width`/`image_height`) before they reach the host: vision models
 * scale them down to about this size anyway (Claude's guidance is 1,568 px on the long edge),
 * so more pixels would only cost tokens and transfer.
 */
export const MODEL_MAX_EDGE = 1568;
/** The viewport when the call names none (width, height or a device): it fits MODEL_MAX_EDGE. */
export const TOOL_VIEWPORT = { width: 1280, height: 800 } as const;
/** The largest hosted image the server downloads to hand to the model. */
const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const IMAGE_FETCH_TIMEOUT_MS = 60_000;
/** list_monitor_changes reads at most this many runs (cursor pages of 100), newest first. */
const MAX_RUNS_SCANNED = 500;

type Args = Record<string, unknown>;

export interface ToolDef {
  definition: Tool;
  call(api: Shotsmith, args: Args): Promise<CallToolResult>;
}

const text = (value: string) => ({ type: 'text' as const, text: value });
const json = (value: unknown) => text(JSON.stringify(value, null, 2));

/** A refusal of the tool's own (not the service's): the same shape as the service's. */
function invalid(message: string): ShotsmithError {
  return new ShotsmithError({ status: 400, code: 'invalid_request', message });
}

function withDefaultNote(schema: ObjectSchema): ObjectSchema {
  const properties = { ...schema.properties };
  for (const side of ['width', 'height'] as const) {
    const field = properties[side] as { description?: string } | undefined;
    properties[side] = {
      ...field,
      description: `${field?.description ?? ''} This tool's default, without a device: ${TOOL_VIEWPORT[side]}.`,
    };
  }
  return { ...schema, properties };
}

function pick(schema: ObjectSchema, names: readonly string[], required: string[]): ObjectSchema {
  const properties: Record<string, object> = {};
  for (const name of names) {
    const field = schema.properties[name];
    if (field) properties[name] = field;
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

const MIME: Record<string, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
};

/** Where the service hosts an image: `/images/<token>.<ext>` on http(s). */
const HOSTED_IMAGE = /^\/images\/[A-Za-z0-9_-]+\.(png|jpe?g|webp)$/;

/**
 * The hosted image's bytes (a public, unguessable URL: no key is sent), bounded. Only an
 * address shaped like the service's hosted images is fetched: an answer that named another
 * (a service not ours, or altered on its way over plain http) cannot make this machine fetch
 * what it likes. Its origin is not compared with SHOTSMITH_URL: the service names its images
 * by its PUBLIC_URL, which may differ.
 */
async function download(url: string): Promise<{ bytes: Buffer; mimeType: string | null }> {
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {}
  if (
    parsed === null ||
    !['http:', 'https:'].includes(parsed.protocol) ||
    parsed.username !== '' ||
    parsed.password !== '' ||
    parsed.search !== '' ||
    !HOSTED_IMAGE.test(parsed.pathname)
  ) {
    throw new ShotsmithError({
      status: 0,
      code: 'image_unavailable',
      message: `the service answered an image address that is not one of its hosted images: ${url}`,
    });
  }
  let res: Response;
  try {
    res = await fetch(url, {
      redirect: 'error',
      signal: AbortSignal.timeout(IMAGE_FETCH_TIMEOUT_MS),
    });
  } catch (err) {
    throw new ShotsmithError({
      status: 0,
      code: 'network_error',
      message: `could not download the image ${url}: ${err instanceof Error ? err.message : String(err)}`,
    });
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    throw new ShotsmithError({
      status: res.status,
      code: 'image_unavailable',
      message: `the image ${url} answered HTTP ${res.status}`,
    });
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > MAX_IMAGE_BYTES) {
      await res.body.cancel().catch(() => undefined);
      throw new ShotsmithError({
        status: 413,
        code: 'payload_too_large',
        message: `the image ${url} is larger than ${MAX_IMAGE_BYTES} bytes; open it by its URL`,
      });
    }
    chunks.push(chunk);
  }
  const type = res.headers.get('content-type')?.split(';')[0]?.trim() ?? '';
  return { bytes: Buffer.concat(chunks), mimeType: type.startsWith('image/') ? type : null };
}

/** The size to ask the service for when an image is larger than the model should see. */
export function modelSize(
  width: number,
  height: number,
): { image_width: number } | { image_height: number } | null {
  if (Math.max(width, height) <= MODEL_MAX_EDGE) return null;
  // One side given: the other follows the image's aspect ratio (docs/api.md "Resized images").
  return width >= height ? { image_width: MODEL_MAX_EDGE } : { image_height: MODEL_MAX_EDGE };
}

function options(args: Args): CaptureOptions {
  // The SDK does not hold arguments to the input schema: what is not a listed option (async,
  // response_type and webhook_url above all: a result sent elsewhere) is refused here.
  const unknown = Object.keys(args).filter((name) => !(name in CAPTURE_OPTIONS_SCHEMA.properties));
  if (unknown.length > 0) throw invalid(`not a capture option here: ${unknown.join(', ')}`);
  const asked = { ...args } as CaptureOptions & Args;
  if (asked.device === undefined) {
    if (asked.width === undefined) asked.width = TOOL_VIEWPORT.width;
    if (asked.height === undefined) asked.height = TOOL_VIEWPORT.height;
  }
  return asked;
}

/**
 * One capture as the model sees it: the service's answer (its URL and facts) and the image,
 * from the hosted copy when it fits MODEL_MAX_EDGE, else from a second capture of the same
 * page that the service delivers at the model's size (`image_width` or `image_height`).
 */
async function capture(api: Shotsmith, args: Args): Promise<CallToolResult> {
  const asked = options(args);
  const full = await api.capture(asked);
  const target = typeof asked.url === 'string' ? asked.url : 'the document';
  const facts: Record<string, unknown> = {
    image_url: full.image_url,
    format: full.format,
    width: full.width,
    height: full.height,
    cached: full.cached,
    expires_at: full.expires_at,
    quota: full.quota,
  };
  for (const extra of ['truncated', 'warnings', 'metadata', 'content', 'content_truncated']) {
    const value = (full as Record<string, unknown>)[extra];
    if (value !== undefined) facts[extra] = value;
  }
  if (!MIME[full.format]) {
    return {
      content: [
        text(`Captured ${target} as ${full.format} (not an image to show): ${full.image_url}`),
        json(facts),
      ],
    };
  }
  const smaller = modelSize(full.width, full.height);
  let shown: CaptureResult = full;
  if (smaller) {
    const { image_width: _w, image_height: _h, image_fit: _f, ...rest } = asked;
    shown = await api.capture({ ...rest, ...smaller });
    Object.assign(facts, {
      image_url: shown.image_url,
      width: shown.width,
      height: shown.height,
      cached: shown.cached,
      expires_at: shown.expires_at,
      quota: shown.quota,
      full_size_image_url: full.image_url,
      full_size_width: full.width,
      full_size_height: full.height,
    });
  }
  const image = await download(shown.image_url);
  const size = smaller
    ? `${shown.width} x ${shown.height} ${shown.format}, downscaled from ${full.width} x ${full.height} (full size: ${full.image_url})`
    : `${shown.width} x ${shown.height} ${shown.format}`;
  return {
    content: [
      {
        type: 'image',
        data: image.bytes.toString('base64'),
        mimeType: image.mimeType ?? MIME[shown.format] ?? 'image/png',
      },
      text(`Captured ${target}: ${size}. Image URL: ${shown.image_url}`),
      json(facts),
    ],
  };
}

const CAPTURE_TOOL: ToolDef = {
  definition: {
    name: 'capture_screenshot',
    title: 'Capture a screenshot',
    description: `Captures a web page (a url, or an html or markdown document) with the Shotsmith screenshot service and returns the image, its hosted URL and facts (size, whether it came from the cache, the month's quota). The image handed back is at most ${MODEL_MAX_EDGE} px on its longer side: a larger capture is also asked of the service at that size (a second capture, one more unit of quota), and the text names the full-size image's URL. Without width/height or a device the viewport is ${TOOL_VIEWPORT.width} x ${TOOL_VIEWPORT.height}. Refusals (bad options, plan limits, quota) come back as tool errors with the service's message and code.`,
    inputSchema: withDefaultNote(CAPTURE_OPTIONS_SCHEMA),
    annotations: { title: 'Capture a screenshot', readOnlyHint: false, openWorldHint: true },
  },
  call: capture,
};

/** The options capture_element takes besides the selector: the page and how it is drawn. */
const ELEMENT_OPTIONS = [
  'selector',
  'url',
  'html',
  'markdown',
  'base_url',
  'format',
  'width',
  'height',
  'device',
  'device_scale_factor',
  'dark_mode',
  'wait_until',
  'wait_for_selector',
  'delay',
  'hide_selectors',
  'block_cookie_banners',
] as const;

const ELEMENT_TOOL: ToolDef = {
  definition: {
    name: 'capture_element',
    title: 'Capture one element',
    description: `Captures one element of a page: the image is cropped to the first element matching the CSS selector (the service's \`selector\` option; a selector that matches nothing is a tool error). Returns the image (at most ${MODEL_MAX_EDGE} px on its longer side, as capture_screenshot), its URL and facts. For every other capture option use capture_screenshot with a selector.`,
    inputSchema: withDefaultNote(pick(CAPTURE_OPTIONS_SCHEMA, ELEMENT_OPTIONS, ['selector'])),
    annotations: { title: 'Capture one element', readOnlyHint: false, openWorldHint: true },
  },
  call: async (api, args) => {
    if (typeof args.selector !== 'string' || args.selector === '') {
      throw invalid('selector is required: the CSS selector of the element to capture');
    }
    const unknown = Object.keys(args).filter(
      (name) => !(ELEMENT_OPTIONS as readonly string[]).includes(name),
    );
    if (unknown.length > 0) {
      throw invalid(
        `capture_element does not take ${unknown.join(', ')} (use capture_screenshot with a selector)`,
      );
    }
    return capture(api, args);
  },
};

const NO_INPUT: Tool['inputSchema'] = { type: 'object', properties: {} };

const DEVICES_TOOL: ToolDef = {
  definition: {
    name: 'list_devices',
    title: 'List device presets',
    description:
      "The service's device presets (a capture's `device` option): each one's name, label, viewport in CSS px, scale factor, and whether it is mobile and has touch.",
    inputSchema: NO_INPUT,
    annotations: { title: 'List device presets', readOnlyHint: true, openWorldHint: false },
  },
  call: async (api) => {
    const { data } = await api.devices();
    const devices = data.map(({ user_agent: _ua, ...device }) => device);
    return { content: [json(devices)] };
  },
};

const USAGE_TOOL: ToolDef = {
  definition: {
    name: 'get_usage',
    title: "The account's usage",
    description:
      "The API key's account: its plan, the captures used this calendar month (UTC) and the monthly limit, what is left, when it resets, and the per-minute rate window.",
    inputSchema: NO_INPUT,
    annotations: { title: "The account's usage", readOnlyHint: true, openWorldHint: false },
  },
  call: async (api) => ({ content: [json(await api.usage())] }),
};

const CREATE_MONITOR_TOOL: ToolDef = {
  definition: {
    name: 'create_monitor',
    title: 'Create a monitor (Pro)',
    description:
      "Pro plan: creates a monitor, a page (url or html) captured on a schedule (`every`: 15m, 1h, 6h, 1d or 7d) and compared with its last image; a run whose share of changed pixels reaches `threshold` is a change with a diff image (see list_monitor_changes). `options` are capture options. Each run is one unit of the monthly quota. On another plan the service's refusal comes back as a tool error.",
    inputSchema: MONITOR_REQUEST_SCHEMA,
    annotations: { title: 'Create a monitor (Pro)', readOnlyHint: false, openWorldHint: true },
  },
  call: async (api, args) => {
    const monitor = await api.monitors.create(args as unknown as MonitorRequest);
    return {
      content: [
        text(`Created monitor ${monitor.id}, next run at ${monitor.next_run_at}.`),
        json(monitor),
      ],
    };
  },
};

const CHANGES_TOOL: ToolDef = {
  definition: {
    name: 'list_monitor_changes',
    title: "A monitor's changes (Pro)",
    description: `Pro plan: the runs of a monitor that found a change, newest first, each with its time, the share of pixels that changed, the image URL and the diff image URL (changed pixels in red); reads at most the ${MAX_RUNS_SCANNED} most recent runs.`,
    inputSchema: {
      type: 'object',
      properties: {
        monitor_id: { type: 'string', description: 'The monitor id (`mon_...`).', maxLength: 64 },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: 50,
          description: 'At most this many changes (default 10).',
        },
      },
      required: ['monitor_id'],
      additionalProperties: false,
    },
    annotations: { title: "A monitor's changes (Pro)", readOnlyHint: true, openWorldHint: false },
  },
  call: async (api, args) => {
    const id = args.monitor_id;
    if (typeof id !== 'string' || id === '' || id.length > 64) {
      throw invalid('monitor_id must be a monitor id (mon_...)');
    }
    const limit = args.limit ?? 10;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 50) {
      throw invalid('limit must be an integer from 1 to 50');
    }
    const monitor = await api.monitors.get(id);
    const changes: unknown[] = [];
    let scanned = 0;
    // Whether runs older than those read may hold more changes.
    let more = false;
    let cursor: string | undefined;
    read: for (;;) {
      const page = await api.monitors.runs(id, {
        limit: Math.min(100, MAX_RUNS_SCANNED - scanned),
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const run of page.data) {
        if (run.changed !== true) {
          scanned++;
          continue;
        }
        if (changes.length === limit) {
          more = true;
          break read;
        }
        scanned++;
        changes.push({
          run_id: run.id,
          at: run.at,
          changed_fraction: run.changed_fraction,
          image_url: run.image_url,
          diff_url: run.diff_url ?? null,
        });
      }
      if (!page.has_more || page.next_cursor === null) break;
      if (scanned >= MAX_RUNS_SCANNED) {
        more = true;
        break;
      }
      cursor = page.next_cursor;
    }
    const { id: _id, name, url, status, every, threshold, last_run_at, last_change_at } = monitor;
    return {
      content: [
        text(
          `${changes.length} change${changes.length === 1 ? '' : 's'} of monitor ${id} in its ${scanned} most recent run${scanned === 1 ? '' : 's'}${more ? ' (older runs not read)' : ''}.`,
        ),
        json({
          monitor: { id, name, url, status, every, threshold, last_run_at, last_change_at },
          changes,
        }),
      ],
    };
  },
};

export const TOOLS: readonly ToolDef[] = [
  CAPTURE_TOOL,
  ELEMENT_TOOL,
  DEVICES_TOOL,
  USAGE_TOOL,
  CREATE_MONITOR_TOOL,
  CHANGES_TOOL,
];
