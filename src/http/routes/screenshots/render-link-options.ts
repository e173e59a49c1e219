import type { TSchema } from 'typebox';
import { BOUNDS } from '../../../domain/bounds.ts';
import { CaptureRequest } from '../../../domain/captures/capture-options.ts';
import { isProxyUrl } from '../../../domain/captures/proxy-url.ts';
import { AppError } from '../../../domain/errors.ts';
import { LINK_PARAMS } from '../../../domain/keys/authenticate-link.ts';
import type { QueryPair } from '../../../lib/signed-query.ts';

/**
 * Fields a link cannot carry: objects (a query has no room for them, and a link is seen by
 * whoever holds it, which headers, cookies and credentials must not be), what only shapes a
 * JSON answer a redirect does not give, and `fresh` (every replay by a stranger would render
 * and cost the owner a unit; `cache_ttl`, at least BOUNDS.links.minCacheTtlSeconds, bounds
 * an image's age instead).
 */
const NOT_IN_LINKS: Readonly<Record<string, string>> = {
  clip: 'an object',
  headers: 'an object',
  cookies: 'a list of objects',
  http_auth: 'an object',
  response_type: 'about the JSON answer, and a link answers a redirect',
  metadata: 'about the JSON answer, and a link answers a redirect',
  content: 'about the JSON answer, and a link answers a redirect',
  async: 'a link answers with the image, not a job',
  webhook_url: 'a link answers with the image, not a job',
  fresh: 'every replay would render anew and cost a unit; cache_ttl bounds the age instead',
  html: 'a link captures a url; POST /v1/screenshots takes documents',
  markdown: 'a link captures a url; POST /v1/screenshots takes documents',
  base_url: 'a link captures a url; POST /v1/screenshots takes documents',
};

const properties = (CaptureRequest as unknown as { properties: Record<string, TSchema> })
  .properties;
const reserved = new Set<string>(LINK_PARAMS);

/**
 * A link's query as a capture request: each parameter under its body name, text turned into
 * the type its schema names (`true`/`false`, numbers), a list from repeated parameters. What
 * cannot be turned stays text, so the body's own validation names the field and the problem
 * exactly as POST /v1/screenshots would.
 */
export function linkOptions(pairs: readonly QueryPair[]): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [name, value] of pairs) {
    if (reserved.has(name)) continue;
    const why = NOT_IN_LINKS[name];
    if (why !== undefined) {
      throw new AppError('invalid_request', `${name} is not allowed in a render link (${why})`);
    }
    // An operator proxy's id is fine; the caller's own proxy URL holds its credentials, which
    // whoever holds the link would see.
    if (name === 'proxy' && isProxyUrl(value)) {
      throw new AppError(
        'invalid_request',
        "proxy is not allowed in a render link as a URL (its credentials would be in the link); name an operator proxy's id",
      );
    }
    const schema = properties[name] as { type?: unknown; items?: { type?: unknown } } | undefined;
    if (schema?.type === 'array') {
      const list = (input[name] as unknown[] | undefined) ?? [];
      list.push(fromText(value, schema.items?.type));
      input[name] = list;
      continue;
    }
    if (name in input) throw new AppError('invalid_request', `${name} is given more than once`);
    input[name] = fromText(value, schema?.type);
  }
  const ttl = input.cache_ttl;
  if (typeof ttl === 'number' && ttl < BOUNDS.links.minCacheTtlSeconds) {
    throw new AppError(
      'invalid_request',
      `cache_ttl in a render link is at least ${BOUNDS.links.minCacheTtlSeconds} seconds ` +
        "(each replay that renders costs the key's account a unit)",
    );
  }
  return input;
}

function fromText(text: string, type: unknown): unknown {
  if (type === 'boolean') return text === 'true' ? true : text === 'false' ? false : text;
  if (type === 'integer' || type === 'number') {
    return /^-?[0-9]{1,15}(\.[0-9]{1,15})?$/.test(text) ? Number(text) : text;
  }
  return text;
}
