/**
 * The submitted-URL check (docs/egress.md, "The submitted URL"), run before any browser time is spent.
 */
import { BOUNDS } from '../../domain/bounds.ts';
import { AppError } from '../../domain/errors.ts';
import type { CheckedDestination, EgressPolicy } from './policy.ts';
import { checkDestination, screenDestination } from './policy.ts';

/**
 * Parses the `url` field of a capture request: a string of at most 2,048 characters holding an
 * absolute http: or https: URL with a host and no user:password part.
 * Not a string, empty, too long or not an absolute URL: AppError `invalid_request`.
 * A valid URL with another scheme, or with credentials: AppError `url_not_allowed`.
 */
export function parseTargetUrl(raw: unknown): URL {
  if (typeof raw !== 'string') {
    throw new AppError('invalid_request', 'url must be a string');
  }
  if (raw.trim() === '') {
    throw new AppError('invalid_request', 'url must not be empty');
  }
  if (raw.length > BOUNDS.capture.urlMaxLength) {
    throw new AppError(
      'invalid_request',
      `url must be at most ${BOUNDS.capture.urlMaxLength} characters`,
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError(
      'invalid_request',
      'url is not a valid absolute URL (it must start with http:// or https://)',
    );
  }
  assertHttpScheme(url);
  if (url.username !== '' || url.password !== '') {
    throw new AppError('url_not_allowed', 'url must not contain a username or password');
  }
  if (url.hostname === '') {
    throw new AppError('invalid_request', 'url must have a host');
  }
  return url;
}

function assertHttpScheme(url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    const scheme = url.protocol.slice(0, -1).slice(0, 32);
    throw new AppError('url_not_allowed', `url must use http or https, not ${scheme}`);
  }
}

/** The port a URL connects to: its explicit port, else 443 for https and 80 for http. */
export function effectivePort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/**
 * Whether the service may fetch this URL (the submitted URL or a main-document redirect):
 * http(s) only, then checkDestination for its host and effective port, the lookup counted
 * against `client`. Returns the checked address; throws AppError `url_not_allowed` or
 * `target_unreachable`.
 */
export async function checkTargetUrl(
  policy: EgressPolicy,
  url: URL,
  client?: string,
): Promise<CheckedDestination> {
  assertHttpScheme(url);
  return checkDestination(policy, url.hostname, effectivePort(url), client);
}

/**
 * The part of checkTargetUrl that needs no DNS (scheme, port, literal and `localhost` hosts),
 * so that an obviously refused URL is a 400 before the quota is even looked at.
 */
export function screenTargetUrl(policy: EgressPolicy, url: URL): void {
  assertHttpScheme(url);
  screenDestination(policy, url.hostname, effectivePort(url));
}
