import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { BOUNDS } from '../../../domain/bounds.ts';
import { type CaptureInput, CaptureRequest } from '../../../domain/captures/capture-options.ts';
import { captureForLink } from '../../../domain/captures/capture-screenshot.ts';
import { imageUrl } from '../../../domain/captures/ports.ts';
import { AppError } from '../../../domain/errors.ts';
import { authenticateRenderLink } from '../../../domain/keys/authenticate-link.ts';
import { parseQuery, QueryError, type QueryPair } from '../../../lib/signed-query.ts';
import { requireApiKey } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { bodyChecker } from '../../validation.ts';
import { linkOptions } from './render-link-options.ts';

/** The link's parsed query, from the hook that checked it to the handler. */
const linkQueries = new WeakMap<FastifyRequest, readonly QueryPair[]>();

/**
 * GET /v1/render: a signed render link (docs/api.md, "Signed render links"), for `<img src>`
 * in pages and emails. The query is read from the raw URL (the signature covers the
 * parameters exactly as sent, repeated ones included), checked before anything else, then
 * runs the same capture as POST /v1/screenshots under the key's account, counted as links
 * are (docs/api.md, "Signed render links"): the key's own window of link requests, a unit
 * per render, hits free.
 */
export function registerRenderLink(app: App, deps: RouteDeps): void {
  const checkBody = bodyChecker(CaptureRequest);
  const linkHook = async (request: FastifyRequest): Promise<void> => {
    const url = request.raw.url ?? '';
    const at = url.indexOf('?');
    const raw = at === -1 ? '' : url.slice(at + 1);
    // Counted before decoding, so a hostile query costs no more than the bound.
    if (raw.split('&').length > BOUNDS.links.maxParams) {
      throw new AppError(
        'invalid_request',
        `a render link may have at most ${BOUNDS.links.maxParams} query parameters`,
      );
    }
    let pairs: QueryPair[];
    try {
      pairs = parseQuery(raw);
    } catch (err) {
      if (err instanceof QueryError) throw new AppError('invalid_request', err.message);
      throw err;
    }
    const { key, user } = await authenticateRenderLink(deps.ctx, pairs);
    request.apiKey = { key, user };
    linkQueries.set(request, pairs);
  };

  app.get(
    '/v1/render',
    {
      // A HEAD (a link checker, a mail scanner) must not capture and count.
      exposeHeadRoute: false,
      schema: {
        tags: ['screenshots'],
        summary: 'Signed render link: capture, then redirect to the hosted image',
        description:
          'For `<img src>` in pages and emails. The capture options are query parameters ' +
          "with the body's names and rules (a list is repeated parameters; clip, headers, " +
          'cookies, http_auth, a proxy URL, response_type, metadata, content, async, webhook_url, fresh, html, ' +
          'markdown and base_url are not ' +
          'allowed; cache_ttl is at least 60), plus `key_id`, ' +
          '`expires` (Unix seconds, at most 7 days ahead) and `signature`: lowercase hex ' +
          'HMAC-SHA256 of the canonical query (every parameter but `signature`, each name ' +
          'and value percent-encoded as RFC 3986, sorted by name then value, joined with ' +
          "`&`), keyed with the key's signing secret. A link answered from the result " +
          'cache costs no quota unit; one that renders costs one. Link requests draw on ' +
          "the key's own per-minute window (the plan's link_requests_per_minute), not on " +
          "the account's capture rate.",
        querystring: Type.Object(
          {
            key_id: Type.String({ description: "The API key's id." }),
            expires: Type.String({ description: 'Unix seconds; at most 7 days ahead.' }),
            signature: Type.String({ description: 'Lowercase hex HMAC-SHA256.' }),
            url: Type.String({ description: 'The page to capture; any other option likewise.' }),
          },
          { additionalProperties: true },
        ),
        response: {
          302: Type.Null({
            description:
              "To the hosted image; Cache-Control allows caching up to the link's expiry " +
              "or the image's, whichever is first.",
          }),
          ...errorResponses(400, 401, 402, 422, 429, 500, 502, 503, 504),
        },
      },
      // The query is the link's own format, read and checked by the hook above.
      validatorCompiler: () => () => true,
      // Links have their own window per key: a replay never draws on the account's rate.
      onRequest: [linkHook, deps.rateLimits.linkHook()],
    },
    async (request, reply) => {
      const auth = requireApiKey(request);
      const pairs = linkQueries.get(request) ?? [];
      const input = linkOptions(pairs);
      checkBody(input);
      const outcome = await captureForLink(deps.capture, {
        user: auth.user,
        keyId: auth.key.id,
        input: input as CaptureInput,
      });
      const { record } = outcome;
      const linkExpires = Number(pairs.find(([name]) => name === 'expires')?.[1]) * 1000;
      const fresh = Math.min(linkExpires, record.expiresAt) - deps.ctx.clock();
      return reply
        .status(302)
        .header('Location', imageUrl(deps.capture, record))
        .header('Cache-Control', `public, max-age=${Math.max(0, Math.floor(fresh / 1000))}`)
        .header('X-Cache', outcome.cached ? 'HIT' : 'MISS')
        .send();
    },
  );
}
