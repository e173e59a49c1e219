import { seal, unseal } from '../../lib/crypto.ts';
import type { SecretDeriver } from '../../lib/server-secret.ts';
import { isProxyUrl } from '../captures/proxy-url.ts';
import { AppError } from '../errors.ts';

/**
 * The fields of a capture request that carry credentials for the target (and `proxy`, below). A queued job must
 * still render them later, so unlike a cache key (an HMAC) its row needs them back: they are
 * encrypted at rest (docs/security.md, "Credentials at rest").
 */
const CREDENTIAL_FIELDS = ['headers', 'cookies', 'http_auth'] as const;
/** A credential field, or `proxy` naming the caller's own proxy (a URL, password and all). */
const isCredential = (name: string, value: unknown): boolean =>
  (CREDENTIAL_FIELDS as readonly string[]).includes(name) ||
  (name === 'proxy' && typeof value === 'string' && isProxyUrl(value));
/** Where the job row's input keeps them, encrypted. */
const SEALED_FIELD = 'sealed_credentials';
const PURPOSE = 'job-credentials';

/**
 * The job's input as its row keeps it: the credential fields, if any, replaced by one
 * AES-256-GCM ciphertext under a key derived from the server secret, bound to the job's id
 * (a ciphertext copied to another job's row does not open there).
 */
export function sealCredentials(
  secrets: SecretDeriver,
  jobId: string,
  input: Record<string, unknown>,
): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  const credentials: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input)) {
    if (isCredential(name, value)) credentials[name] = value;
    else kept[name] = value;
  }
  if (Object.keys(credentials).length === 0) return kept;
  const key = secrets.derive(PURPOSE);
  return { ...kept, [SEALED_FIELD]: seal(key, JSON.stringify(credentials), jobId) };
}

/**
 * The capture request again, from the job row's input. A ciphertext that does not open (the
 * server secret was changed while the job waited) fails the job: its credentials are gone.
 */
export function openCredentials(
  secrets: SecretDeriver,
  jobId: string,
  stored: Record<string, unknown>,
): Record<string, unknown> {
  const { [SEALED_FIELD]: sealed, ...input } = stored;
  if (sealed === undefined) return input;
  const text = typeof sealed === 'string' ? unseal(secrets.derive(PURPOSE), sealed, jobId) : null;
  if (text === null) {
    throw new AppError(
      'internal_error',
      "the capture's credentials could not be read (the server secret changed after it was queued)",
    );
  }
  return { ...input, ...(JSON.parse(text) as Record<string, unknown>) };
}
