import { isIP } from 'node:net';
import { getPublicSuffix } from 'tldts';
import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { AppError } from '../../errors.ts';
import type { CookieSpec } from '../renderer.ts';
import { defineOption } from './define.ts';
import { TOKEN } from './header-text.ts';

const SAME_SITE = ['Strict', 'Lax', 'None'] as const;
type SameSite = (typeof SAME_SITE)[number];

const Cookie = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    value: Type.String(),
    domain: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: BOUNDS.capture.maxCookieScopeLength,
        description:
          "A parent domain of the target's host (the cookie then reaches its subdomains too). " +
          "Default: the target's host only.",
      }),
    ),
    path: Type.Optional(
      Type.String({ minLength: 1, maxLength: BOUNDS.capture.maxCookieScopeLength }),
    ),
    secure: Type.Optional(Type.Boolean()),
    http_only: Type.Optional(Type.Boolean()),
    same_site: Type.Optional(
      Type.Unsafe<SameSite | Lowercase<SameSite>>(
        Type.String({ enum: [...SAME_SITE, ...SAME_SITE.map((s) => s.toLowerCase())] }),
      ),
    ),
  },
  { additionalProperties: false },
);

/** The host a cookie's `domain` is checked against: the URL's, brackets of IPv6 removed. */
const hostOf = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '');

export const cookies = defineOption({
  name: 'cookies',
  schema: Type.Array(Cookie, {
    maxItems: BOUNDS.capture.maxCookies,
    description:
      "Cookies the browser holds for the target before it loads, scoped to the target's host " +
      '(or to `domain`, a parent of it). `same_site: "None"` needs `secure: true`, and ' +
      '`secure` an https target.',
  }),
  resolve(value, { url }) {
    const host = hostOf(url);
    const list: CookieSpec[] = (value ?? []).map((c, i) => {
      const at = `cookies[${i}]`;
      if (!TOKEN.test(c.name)) {
        throw new AppError('invalid_request', `${at}.name is not a valid cookie name`);
      }
      if (c.name.length + c.value.length > BOUNDS.capture.maxCookieLength) {
        throw new AppError(
          'invalid_request',
          `${at}: name and value together must be at most ${BOUNDS.capture.maxCookieLength} characters`,
        );
      }
      if (!/^[\x20-\x3a\x3c-\x7e]*$/.test(c.value)) {
        throw new AppError(
          'invalid_request',
          `${at}.value may hold printable ASCII characters other than ";" only`,
        );
      }
      let domain: string | null = null;
      if (c.domain !== undefined) {
        const wanted = c.domain.toLowerCase().replace(/^\./, '');
        const parent = !isIP(host) && wanted.includes('.') && host.endsWith(`.${wanted}`);
        if (wanted !== host && !parent) {
          throw new AppError(
            'invalid_request',
            `${at}.domain must be the target's host (${host.slice(0, 100)}) or a parent domain of it`,
          );
        }
        // A browser keeps no cookie for a whole public suffix (co.uk, github.io): refused
        // here rather than set and silently never sent.
        if (parent && getPublicSuffix(wanted, { allowPrivateDomains: true }) === wanted) {
          throw new AppError(
            'invalid_request',
            `${at}.domain ${wanted.slice(0, 100)} is a public suffix: no browser keeps a cookie for it`,
          );
        }
        domain = wanted === host ? null : wanted;
      }
      const path = c.path ?? '/';
      if (!/^\/[\x21-\x3a\x3c-\x7e]*$/.test(path)) {
        throw new AppError(
          'invalid_request',
          `${at}.path must start with "/" and hold printable ASCII characters other than ";"`,
        );
      }
      const secure = c.secure ?? false;
      const sameSite = c.same_site
        ? (SAME_SITE.find((s) => s.toLowerCase() === c.same_site?.toLowerCase()) ?? null)
        : null;
      if (sameSite === 'None' && !secure) {
        throw new AppError('invalid_request', `${at}: same_site "None" needs secure: true`);
      }
      if (secure && url.protocol !== 'https:') {
        throw new AppError('invalid_request', `${at}: a secure cookie needs an https url`);
      }
      return {
        name: c.name,
        value: c.value,
        domain,
        path,
        secure,
        httpOnly: !!c.http_only,
        sameSite,
      };
    });
    return { cookies: list };
  },
  // Cookie values are often sessions.
  cacheKey: (o, digest) => (o.cookies.length > 0 ? digest(o.cookies) : undefined),
});
