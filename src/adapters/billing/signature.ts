import { createHmac, timingSafeEqual } from 'node:crypto';
import { BOUNDS } from '../../domain/bounds.ts';

/**
 * Webhook signatures in Stripe's scheme, shared by the Stripe and the local provider: the
 * header `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">[,v1=...]`.
 * Several v1 entries appear while Stripe rotates a signing secret, and several configured
 * secrets cover our side of a rotation; one match of any pair is enough. The header's name is
 * WEBHOOK_SIGNATURE_HEADER (domain/billing/ports.ts).
 */

export type SignatureCheck = 'ok' | 'missing' | 'malformed' | 'mismatch' | 'stale' | 'future';

const hmacHex = (secret: string, timestamp: number, payload: string): string =>
  createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');

export function signWebhookPayload(payload: string, secret: string, timestamp: number): string {
  return `t=${timestamp},v1=${hmacHex(secret, timestamp, payload)}`;
}

export function verifyWebhookSignature(input: {
  payload: string;
  header: string | undefined;
  secrets: readonly string[];
  /** Our clock, epoch ms. */
  now: number;
  toleranceSeconds?: number;
}): SignatureCheck {
  if (input.header === undefined || input.header === '') return 'missing';
  let timestamp: number | null = null;
  const candidates: Buffer[] = [];
  for (const part of input.header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (!/^\d{1,12}$/.test(value)) return 'malformed';
      timestamp = Number(value);
    } else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) {
      candidates.push(Buffer.from(value, 'hex'));
    }
  }
  if (timestamp === null || candidates.length === 0) return 'malformed';

  let matched = false;
  for (const secret of input.secrets) {
    const expected = Buffer.from(hmacHex(secret, timestamp, input.payload), 'hex');
    // Every comparison runs (no early exit), each in constant time.
    for (const candidate of candidates) {
      if (timingSafeEqual(expected, candidate)) matched = true;
    }
  }
  if (!matched) return 'mismatch';

  const tolerance = input.toleranceSeconds ?? BOUNDS.billing.webhookToleranceSeconds;
  const age = Math.floor(input.now / 1000) - timestamp;
  if (age > tolerance) return 'stale';
  if (age < -tolerance) return 'future';
  return 'ok';
}
