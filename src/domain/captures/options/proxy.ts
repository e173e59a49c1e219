import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import { isProxyUrl, PROXY_ID_PATTERN, parseProxyUrl } from '../proxy-url.ts';
import { defineOption, planRestriction } from './define.ts';

/** The longest `proxy` value, a URL with credentials included. */
const MAX_PROXY_LENGTH = 2_048;

export const proxy = defineOption({
  name: 'proxy',
  schema: Type.String({
    minLength: 1,
    maxLength: MAX_PROXY_LENGTH,
    description:
      "Where the page's traffic goes out: an operator proxy's id (GET /v1/proxies), or your " +
      'own proxy as `http://`, `https://`, `socks5://` or `socks5h://` URL, credentials ' +
      'allowed (`socks5://user:pass@host:1080`). Your own proxy must be on a public address. ' +
      'Its credentials are never logged nor answered. Not with `proxy_country`.',
  }),
  resolve(value, { plan }) {
    if (value === undefined) return { proxy: null };
    if (!plan.proxies) throw planRestriction('proxy', plan);
    if (isProxyUrl(value)) {
      parseProxyUrl(value, 'proxy');
      return { proxy: { kind: 'url', url: value } };
    }
    if (!PROXY_ID_PATTERN.test(value)) {
      throw new AppError(
        'invalid_request',
        'proxy must be an operator proxy id (letters, digits, ".", "_" and "-") or a proxy URL',
      );
    }
    return { proxy: { kind: 'operator', id: value } };
  },
  // The caller's own URL (credentials and all) only as an HMAC; an id or a country as it is.
  cacheKey: (o, digest) =>
    o.proxy === null
      ? undefined
      : o.proxy.kind === 'url'
        ? `url:${digest(o.proxy.url)}`
        : o.proxy.kind === 'operator'
          ? `id:${o.proxy.id}`
          : `country:${o.proxy.country}`,
});

export const proxyCountry = defineOption({
  name: 'proxy_country',
  schema: Type.String({
    minLength: 2,
    maxLength: 2,
    description:
      'Go out through an operator proxy serving this country (ISO 3166-1 alpha-2, `de`), ' +
      'one in turn when several do. Not with `proxy`.',
  }),
  resolve(value, { plan, resolved }) {
    if (value === undefined) return {};
    if (!plan.proxies) throw planRestriction('proxy_country', plan);
    if (resolved.proxy) {
      throw new AppError('invalid_request', 'proxy and proxy_country cannot be used together');
    }
    if (!/^[A-Za-z]{2}$/.test(value)) {
      throw new AppError(
        'invalid_request',
        'proxy_country must be a two-letter ISO 3166-1 country code, such as de or us',
      );
    }
    return { proxy: { kind: 'country', country: value.toLowerCase() } };
  },
  // Part of `proxy`'s key.
  cacheKey: () => undefined,
});
