/**
 * The server's configuration, from its environment only (an MCP host passes it in the
 * server's `env` block): the API key and the service's origin. Every problem is reported at
 * once, and the key's value never appears in a message.
 */
export interface McpConfig {
  apiKey: string;
  baseUrl: string;
}

/** An API key as the service issues it: `sk_live_` and 38 base62 characters. */
const KEY_PATTERN = /^sk_live_[0-9A-Za-z]{38}$/;

export function readConfig(
  env: Readonly<Record<string, string | undefined>>,
): { config: McpConfig; problems?: undefined } | { config?: undefined; problems: string[] } {
  const problems: string[] = [];
  const apiKey = (env.SHOTSMITH_API_KEY ?? '').trim();
  const baseUrl = (env.SHOTSMITH_URL ?? '').trim();
  if (!apiKey) {
    problems.push('SHOTSMITH_API_KEY is not set: give the server an API key (sk_live_...)');
  } else if (!KEY_PATTERN.test(apiKey)) {
    problems.push(
      'SHOTSMITH_API_KEY is not an API key: it must be sk_live_ followed by 38 letters and digits',
    );
  }
  if (!baseUrl) {
    problems.push(
      "SHOTSMITH_URL is not set: give the server the service's origin, e.g. https://shots.example.com",
    );
  } else {
    let url: URL | null = null;
    try {
      url = new URL(baseUrl);
    } catch {
      // Reported below.
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      problems.push(`SHOTSMITH_URL must be an http(s) URL, not "${baseUrl.slice(0, 200)}"`);
    } else if (url.username || url.password) {
      problems.push('SHOTSMITH_URL must not carry a user name or password');
    }
  }
  return problems.length > 0 ? { problems } : { config: { apiKey, baseUrl } };
}
