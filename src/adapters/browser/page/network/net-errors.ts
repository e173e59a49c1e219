/**
 * Chromium's net::ERR_* codes from a failed main-document navigation, as the service's errors.
 */
import { AppError } from '../../../../domain/errors.ts';

const REASONS: Record<string, string> = {
  ERR_NAME_NOT_RESOLVED: 'the name does not resolve (DNS)',
  ERR_NAME_RESOLUTION_FAILED: 'the name does not resolve (DNS)',
  ERR_CONNECTION_REFUSED: 'connection refused',
  ERR_CONNECTION_RESET: 'connection reset',
  ERR_CONNECTION_CLOSED: 'connection closed before a response',
  ERR_CONNECTION_ABORTED: 'connection aborted',
  ERR_CONNECTION_FAILED: 'connection failed',
  ERR_EMPTY_RESPONSE: 'empty response (connection closed)',
  ERR_CONNECTION_TIMED_OUT: 'connection timed out',
  ERR_TIMED_OUT: 'timed out',
  ERR_ADDRESS_UNREACHABLE: 'address unreachable',
  ERR_ADDRESS_INVALID: 'invalid address',
  ERR_NETWORK_CHANGED: 'network changed',
  ERR_INTERNET_DISCONNECTED: 'no network',
  ERR_TOO_MANY_REDIRECTS: 'too many redirects',
  ERR_INVALID_RESPONSE: 'invalid HTTP response',
  ERR_INVALID_HTTP_RESPONSE: 'invalid HTTP response',
  ERR_INVALID_CHUNKED_ENCODING: 'invalid HTTP response',
  ERR_CONTENT_LENGTH_MISMATCH: 'response cut short',
  ERR_INCOMPLETE_CHUNKED_ENCODING: 'response cut short',
  ERR_RESPONSE_HEADERS_TOO_BIG: 'response headers too large',
  ERR_RESPONSE_HEADERS_MULTIPLE_CONTENT_LENGTH: 'invalid HTTP response',
  ERR_RESPONSE_HEADERS_MULTIPLE_LOCATION: 'invalid redirect',
  ERR_INVALID_REDIRECT: 'invalid redirect',
  ERR_TUNNEL_CONNECTION_FAILED: 'the connection was refused or failed upstream',
  ERR_PROXY_CONNECTION_FAILED: 'egress proxy unavailable',
  ERR_SSL_PROTOCOL_ERROR: 'TLS handshake failed',
  ERR_SSL_VERSION_OR_CIPHER_MISMATCH: 'TLS handshake failed (version or cipher)',
  ERR_BAD_SSL_CLIENT_AUTH_CERT: 'TLS client certificate required',
  ERR_BLOCKED_BY_RESPONSE: 'the response refused to be displayed',
  ERR_HTTP2_PROTOCOL_ERROR: 'HTTP/2 protocol error',
};

/** Redirects Chromium refuses to follow: to file:, data:, javascript:, chrome:, unknown schemes. */
const UNSAFE_REDIRECT = new Set([
  'ERR_UNSAFE_REDIRECT',
  'ERR_UNKNOWN_URL_SCHEME',
  'ERR_DISALLOWED_URL_SCHEME',
]);

export const netErrorCode = (message: string): string | null =>
  /net::(ERR_[A-Z0-9_]+)/.exec(message)?.[1] ?? null;

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the target';
  }
}

/** The AppError for a navigation that failed with `code` (net::ERR_* without the prefix). */
export function navigationError(
  code: string,
  url: string,
  hints: { download: 'attachment' | 'pdf' | null },
): AppError {
  const host = hostOf(url);
  if (UNSAFE_REDIRECT.has(code)) {
    return new AppError('url_not_allowed', `${host} redirected to a URL that is not http(s)`);
  }
  if (code === 'ERR_ABORTED' && hints.download === 'pdf') {
    return new AppError(
      'target_unreachable',
      `${host} answered with a PDF file, not a page: the headless shell has no PDF viewer (docs/engine.md)`,
    );
  }
  if (code === 'ERR_ABORTED' && hints.download === 'attachment') {
    return new AppError('target_unreachable', `${host} answered with a file download, not a page`);
  }
  let reason = REASONS[code];
  if (reason === undefined && (code.startsWith('ERR_CERT_') || code.startsWith('ERR_SSL_'))) {
    reason = `TLS certificate error (${code})`;
  }
  return new AppError('target_unreachable', `could not reach ${host}: ${reason ?? code}`);
}
