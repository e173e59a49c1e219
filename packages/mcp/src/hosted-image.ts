/**
 * The hosted image a capture answered, downloaded to hand to the model. The service names it
 * in its answer, so a service not ours, or an answer altered on its way over plain http,
 * could name any address; this machine is the host's (it reaches its network, its loopback
 * services), so it fetches only from the origin it was configured with (SHOTSMITH_URL) and
 * nothing else: no other host, port or scheme, no redirect, a bounded body of the image type
 * the capture's format says. When any of that fails the capture still stands: the tool
 * answers the URL and says why the image is not shown. The service names its images by its
 * PUBLIC_URL, so one reached through another origin (SHOTSMITH_URL on localhost behind a
 * proxy's public name) has its images answered by URL only (docs/mcp.md says to configure
 * the public origin).
 */

/** The largest hosted image the server downloads to hand to the model. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const IMAGE_FETCH_TIMEOUT_MS = 60_000;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The formats handed to the model as images: their MIME type and how their bytes begin. */
export const SHOWN_FORMATS: Readonly<
  Record<string, { mimeType: string; starts(bytes: Buffer): boolean }>
> = {
  png: { mimeType: 'image/png', starts: (b) => b.subarray(0, 8).equals(PNG_SIGNATURE) },
  jpeg: { mimeType: 'image/jpeg', starts: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  webp: {
    mimeType: 'image/webp',
    starts: (b) => b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP',
  },
};

/** Where the service hosts an image: `/images/<token>.<ext>`, no query. */
const HOSTED_IMAGE = /^\/images\/[A-Za-z0-9_-]+\.(png|jpe?g|webp)$/;

export type Download =
  | { ok: true; bytes: Buffer; mimeType: string }
  | { ok: false; reason: string };

const refused = (reason: string): Download => ({ ok: false, reason });

/** Why `url` is not fetched, or null: it must be a hosted image on `origin` exactly. */
function offOrigin(url: URL, origin: string): string | null {
  // URL.origin is scheme, host and port (the default port made implicit): all three match.
  if (url.origin !== origin) {
    return `the image is not on the configured service's origin (${origin}), and this server fetches from nowhere else`;
  }
  if (url.username !== '' || url.password !== '' || url.search !== '') {
    return 'the image address carries credentials or a query, unlike a hosted image';
  }
  if (!HOSTED_IMAGE.test(url.pathname)) {
    return "the address is not one of the service's hosted images";
  }
  return null;
}

function parse(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

/** The body, read until `max` bytes and no further. */
async function readBounded(res: Response, max: number): Promise<Buffer | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (res.body === null) return Buffer.alloc(0);
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > max) {
      await res.body.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * The hosted image at `url`, or why it is not shown. A public, unguessable URL: no key is
 * sent with it.
 */
export async function downloadImage(options: {
  url: string;
  /** SHOTSMITH_URL's origin. */
  origin: string;
  /** The capture's `format`: the image must be of its type. */
  format: string;
}): Promise<Download> {
  const expected = SHOWN_FORMATS[options.format];
  if (expected === undefined) return refused(`${options.format} is not an image format to show`);
  const url = parse(options.url);
  if (url === null) return refused('the service answered an image address that is not a URL');
  const off = offOrigin(url, options.origin);
  if (off !== null) return refused(off);
  let res: Response;
  try {
    res = await fetch(url, {
      // A redirect is answered, never followed: it could point anywhere.
      redirect: 'manual',
      signal: AbortSignal.timeout(IMAGE_FETCH_TIMEOUT_MS),
    });
  } catch (err) {
    return refused(`it could not be downloaded (${err instanceof Error ? err.message : err})`);
  }
  const failed = unusable(res, expected.mimeType);
  if (failed !== null) {
    await res.body?.cancel().catch(() => undefined);
    return refused(failed);
  }
  let bytes: Buffer | null;
  try {
    bytes = await readBounded(res, MAX_IMAGE_BYTES);
  } catch (err) {
    return refused(`it could not be downloaded (${err instanceof Error ? err.message : err})`);
  }
  if (bytes === null) return refused(`it is larger than ${MAX_IMAGE_BYTES} bytes`);
  if (!expected.starts(bytes)) return refused(`its bytes are not a ${options.format} image`);
  return { ok: true, bytes, mimeType: expected.mimeType };
}

/** Why an answer's head rules its body out, or null. */
function unusable(res: Response, mimeType: string): string | null {
  if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400)) {
    return `its address answered a redirect (HTTP ${res.status}), which this server does not follow`;
  }
  if (res.status !== 200) return `its address answered HTTP ${res.status}`;
  const type = res.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() ?? '';
  if (type !== mimeType) {
    return `it was served as ${JSON.stringify(type.slice(0, 100))}, not ${mimeType}`;
  }
  const length = Number(res.headers.get('content-length') ?? 0);
  if (length > MAX_IMAGE_BYTES) return `it is larger than ${MAX_IMAGE_BYTES} bytes`;
  return null;
}
