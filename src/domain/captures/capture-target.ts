/**
 * What a capture shows: the page at `url`, or a document the request carries (`html`, or
 * `markdown` rendered to HTML). Exactly one of the three; a document may name the address it
 * stands at (`base_url`), against which its relative links resolve. docs/api.md, "HTML and
 * Markdown".
 */
import { AppError, isAppError } from '../errors.ts';
import type { TargetGuard } from './ports.ts';

/**
 * Where a document without `base_url` is shown. `.invalid` never resolves (RFC 2606), and the
 * browser answers every request to this origin itself (the document, or a refusal), so its
 * relative links load nothing and nothing leaves the browser for it.
 */
export const DOCUMENT_URL = 'https://document.invalid/';

const SOURCES = ['url', 'html', 'markdown'] as const;

export interface CaptureTarget {
  /** The address the browser opens: the URL, or where the document stands. */
  navigation: URL;
  /**
   * The address the egress rules check before the render (the URL, or `base_url`); null for a
   * document without `base_url`: nothing is fetched for it.
   */
  checked: URL | null;
}

/**
 * The request's source, checked: exactly one of url, html, markdown (400 naming them
 * otherwise), `base_url` only beside a document, each address through the target guard's
 * parse (a bad `base_url` is named as such).
 */
export function captureTarget(
  guard: Pick<TargetGuard, 'parse'>,
  input: { url?: unknown; html?: unknown; markdown?: unknown; base_url?: unknown },
): CaptureTarget {
  const given = SOURCES.filter((name) => input[name] !== undefined);
  if (given.length === 0) {
    throw new AppError('invalid_request', 'one of url, html or markdown is required');
  }
  if (given.length > 1) {
    throw new AppError(
      'invalid_request',
      `give only one of url, html or markdown (got ${given.join(' and ')})`,
    );
  }
  if (given[0] === 'url') {
    if (input.base_url !== undefined) {
      throw new AppError('invalid_request', 'base_url is only for html or markdown, not url');
    }
    const url = guard.parse(input.url);
    return { navigation: url, checked: url };
  }
  if (input.base_url === undefined) return { navigation: new URL(DOCUMENT_URL), checked: null };
  let base: URL;
  try {
    base = guard.parse(input.base_url);
  } catch (err) {
    // The guard's messages name `url`; this one is the document's base.
    if (isAppError(err)) throw new AppError(err.code, err.message.replace(/^url\b/, 'base_url'));
    throw err;
  }
  return { navigation: base, checked: base };
}
