/**
 * Checks a webhook from Shotsmith (Standard Webhooks): `webhook-signature` holds one or more
 * space-separated `v1,<base64>` signatures of `<webhook-id>.<webhook-timestamp>.<body>`, HMAC-
 * SHA256 keyed with the decoded bytes of the account's `whsec_...` secret. Pass the body
 * exactly as received (before any JSON parsing). WebCrypto only.
 */
/** `screenshot.succeeded` / `screenshot.failed`: an async capture ended. */
export interface ScreenshotEvent {
  type: 'screenshot.succeeded' | 'screenshot.failed';
  /** ISO 8601. */
  timestamp: string;
  /** What GET /v1/screenshots/{id} answered when the job finished. */
  data: {
    id: string;
    status: 'succeeded' | 'failed';
    [field: string]: unknown;
  };
}

/** `batch.completed`: every job of a batch ended. */
export interface BatchCompletedEvent {
  type: 'batch.completed';
  timestamp: string;
  /** What GET /v1/screenshots/batch/{id} answered then. */
  data: { batch_id: string; [field: string]: unknown };
}

/** `monitor.changed`: a monitor's run found its page changed past the threshold. */
export interface MonitorChangedEvent {
  type: 'monitor.changed';
  timestamp: string;
  data: {
    monitor_id: string;
    run_id: string;
    changed_fraction: number;
    image_url: string;
    /** The baseline's image: what this run was compared with. */
    previous_image_url: string | null;
    /** Null when the image changed size (nothing to mark pixel by pixel). */
    diff_url: string | null;
  };
}

/** `monitor.failed`: a monitor's runs failed several times in a row. */
export interface MonitorFailedEvent {
  type: 'monitor.failed';
  timestamp: string;
  data: { monitor_id: string; run_id: string; failures: number; error: string };
}

/** A verified event; `type` tells which. */
export type WebhookEvent =
  | ScreenshotEvent
  | BatchCompletedEvent
  | MonitorChangedEvent
  | MonitorFailedEvent;

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string {
  const value = headers instanceof Headers ? headers.get(name) : headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  if (typeof text !== 'string' || text === '') {
    throw new WebhookVerificationError(`missing ${name} header`);
  }
  return text;
}

const fromBase64 = (text: string): Uint8Array<ArrayBuffer> =>
  Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const toBase64 = (bytes: ArrayBuffer): string =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)));

/** Equal strings, compared without an early exit. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export async function verifyWebhook(
  secret: string,
  headers: HeaderSource,
  body: string,
  options: { toleranceSeconds?: number; now?: Date } = {},
): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestampText = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  const timestamp = Number(timestampText);
  if (!/^\d+$/.test(timestampText)) throw new WebhookVerificationError('bad webhook-timestamp');
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookVerificationError('webhook-timestamp is too far from now');
  }
  if (!secret.startsWith('whsec_'))
    throw new WebhookVerificationError('the secret must start with whsec_');
  const key = await crypto.subtle.importKey(
    'raw',
    fromBase64(secret.slice('whsec_'.length)),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = await crypto.subtle.sign(
    'HMAC',
    key,
    new TextEncoder().encode(`${id}.${timestampText}.${body}`),
  );
  const expected = `v1,${toBase64(mac)}`;
  if (!signatures.split(' ').some((candidate) => sameText(candidate, expected))) {
    throw new WebhookVerificationError('no signature matches');
  }
  return JSON.parse(body) as WebhookEvent;
}
