/**
 * The session cookie's SameSite and Secure flags (docs/security.md, "Sessions and cookies").
 *
 * Lax is the default: the dashboard is served by the API itself or from another origin on the
 * same site (`app.example.com` beside `api.example.com`), and Lax cookies travel on same-site
 * fetches. A dashboard on another *site* never gets a Lax cookie on its fetches, so when a
 * configured dashboard origin is cross-site to PUBLIC_URL the cookie becomes SameSite=None,
 * which browsers accept only with Secure, hence only when PUBLIC_URL is https. The Origin
 * check in auth.ts stays the CSRF defence either way.
 */
export interface SessionCookiePolicy {
  secure: boolean;
  sameSite: 'lax' | 'none';
}

export function sessionCookiePolicy(
  publicUrl: URL,
  dashboardOrigins: readonly string[],
): SessionCookiePolicy {
  const secure = publicUrl.protocol === 'https:';
  const crossSite = dashboardOrigins.some((origin) => isCrossSite(new URL(origin), publicUrl));
  return { secure, sameSite: secure && crossSite ? 'none' : 'lax' };
}

/**
 * Schemeful same-site, as browsers decide SameSite: the scheme and the registrable domain
 * must match (ports do not matter). Without the Public Suffix List the registrable domain is
 * approximated: the last two labels, or three under a country code with a common second
 * level (`example.co.uk`). Hosts under a private suffix (`a.github.io`) are the known miss.
 */
export function isCrossSite(a: URL, b: URL): boolean {
  if (a.protocol !== b.protocol) return true;
  return siteOf(a.hostname) !== siteOf(b.hostname);
}

const SECOND_LEVEL = new Set(['ac', 'co', 'com', 'edu', 'gov', 'go', 'ne', 'net', 'or', 'org']);

function siteOf(hostname: string): string {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  // IP literals are a site of their own.
  if (host.startsWith('[') || /^\d{1,3}(\.\d{1,3}){3}$/.test(host)) return host;
  const labels = host.split('.');
  const [second = '', top = ''] = labels.slice(-2);
  const take = top.length === 2 && SECOND_LEVEL.has(second) ? 3 : 2;
  return labels.slice(-take).join('.');
}
