import { createHmac } from 'node:crypto';
import { randomBase62 } from '../../lib/crypto.ts';
import type { DomainContext } from '../context.ts';

/**
 * An account's webhook secret (Standard Webhooks): `whsec_` + base64 of 32 bytes, the HMAC
 * key being those bytes. Derived like a signing secret (docs/security.md, "Signing
 * secrets"): from the server secret, the account's id and a nonce on its row, made on first
 * use; rotating writes a new nonce.
 */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

const secretFor = (ctx: DomainContext, userId: number, nonce: string): string =>
  `${WEBHOOK_SECRET_PREFIX}${ctx.secrets.derive('webhook-secret', userId, nonce).toString('base64')}`;

export async function webhookSecret(ctx: DomainContext, userId: number): Promise<string> {
  const nonce = await ctx.store.users.webhookNonce(userId, randomBase62(22));
  return secretFor(ctx, userId, nonce);
}

/** A new secret: deliveries from now on, retries of earlier ones included, are signed with it. */
export async function rotateWebhookSecret(ctx: DomainContext, userId: number): Promise<string> {
  const nonce = randomBase62(22);
  await ctx.store.users.setWebhookNonce(userId, nonce);
  return secretFor(ctx, userId, nonce);
}

/**
 * The `webhook-signature` value: `v1,` + base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`,
 * keyed with the secret's decoded bytes (the Standard Webhooks scheme).
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}
