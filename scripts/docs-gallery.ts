/**
 * `npm run docs:gallery`: the images of docs/options.md, made by the service itself. It serves
 * docs/examples/article.html (and its script) on loopback, starts the app in-process (embedded mode, a fresh
 * data directory), runs every request of docs/examples/examples.json as a Pro account
 * (`https://news.example/` standing for the local page), writes each image to
 * docs/images/options-<name>.<ext> and their sizes to docs/images/options.json, and
 * regenerates docs/options.md. test/docs-site.test.ts runs the same requests again and
 * checks that they still make images of those sizes.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createKey, signUp, startApp, type TestApp } from '../test/helpers/app.ts';
import { type FixtureSite, imageSize, startSite } from '../test/helpers/fixtures.ts';

const DOCS = path.resolve(import.meta.dirname, '..', 'docs');

export interface Example {
  name: string;
  option: string;
  caption: string;
  request: Record<string, unknown>;
}

export interface Made {
  name: string;
  format: string;
  width: number;
  height: number;
}

export async function loadExamples(): Promise<{ site: string; examples: Example[] }> {
  return JSON.parse(await readFile(path.join(DOCS, 'examples', 'examples.json'), 'utf8'));
}

/** The fixture site the examples capture. */
export async function startExampleSite(): Promise<FixtureSite> {
  const dir = path.join(DOCS, 'examples');
  const article = await readFile(path.join(dir, 'article.html'), 'utf8');
  const script = await readFile(path.join(dir, 'article.js'), 'utf8');
  return startSite({
    '/article': article,
    '/article.js': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    },
  });
}

/** An example's request with the documented host replaced by the local fixture site. */
export function localRequest(
  example: Example,
  documented: string,
  origin: string,
): Record<string, unknown> {
  return JSON.parse(JSON.stringify(example.request).replaceAll(documented, origin));
}

/** Runs one example as `key`: the image and its size. */
export async function runExample(
  t: TestApp,
  key: string,
  body: Record<string, unknown>,
): Promise<{ bytes: Buffer; made: Omit<Made, 'name'> }> {
  const res = await fetch(`${t.url}/v1/screenshots`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ ...body, response_type: 'image' }),
  });
  if (res.status !== 201) throw new Error(`${res.status} ${await res.text()}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  const size = imageSize(bytes);
  return { bytes, made: { format: size.format, width: size.width, height: size.height } };
}

/** An app and a Pro key to run the examples with. */
export async function exampleApp(site: FixtureSite): Promise<{ t: TestApp; key: string }> {
  const t = await startApp({
    db: 'sqlite',
    env: { EGRESS_ALLOWLIST: site.hostPort },
    plans: { pro: { rate_per_minute: 1000 } },
  });
  const user = await signUp(t);
  await t.deps.ctx.store.users.setPlan(user.id, 'pro', Date.now());
  return { t, key: (await createKey(t, user.cookie)).key };
}

const EXT: Record<string, string> = { png: 'png', jpeg: 'jpg', webp: 'webp' };
const fileOf = (m: Made) => `options-${m.name}.${EXT[m.format] ?? m.format}`;

function page(examples: Example[], made: Made[], documented: string): string {
  const sections = examples.map((e, i) => {
    const m = made[i] as Made;
    return [
      `## ${e.option}`,
      '',
      e.caption,
      '',
      '```json',
      JSON.stringify(e.request, null, 2),
      '```',
      '',
      `![${e.caption}](images/${fileOf(m)})`,
      '',
      `*${m.format.toUpperCase()}, ${m.width} x ${m.height} pixels.*`,
      '',
    ].join('\n');
  });
  return [
    '# Options, with images',
    '',
    'What the capture options do, shown. Each request below was sent to the service as it is',
    `here, with \`${documented}/article\` standing for a fixture page of the repository`,
    '(`docs/examples/article.html`) served on the same machine, and the image under it is what',
    'came back: `npm run docs:gallery` makes them, and `test/docs-site.test.ts` sends every',
    'request again and checks that it still makes an image of the same format and size.',
    '',
    "Every option, with its type, default and rules, is in the API guide's",
    '[request fields](api.md#request-fields); the options that change no pixels are at the end',
    'of this page with an example each.',
    '',
    ...sections,
    '## Options without a picture',
    '',
    OTHER_OPTIONS,
  ].join('\n');
}

/** The options whose effect is not an image, each with an example body. */
const OTHER_OPTIONS = `| Option | Example | What it does |
|---|---|---|
| \`url\` | \`{"url": "https://example.com"}\` | The page (required). |
| \`quality\` | \`{"format": "webp", "quality": 60}\` | JPEG and WebP quality. |
| \`fresh\` | \`{"fresh": true}\` | Render anew, skipping the cache (Pro). |
| \`cache_ttl\` | \`{"cache_ttl": 0}\` | How old a cached result may be, in seconds. |
| \`wait_until\` | \`{"wait_until": "networkidle0"}\` | When the page counts as loaded. |
| \`delay\` | \`{"delay": 1500}\` | Extra milliseconds before the capture. |
| \`wait_for_selector\` | \`{"wait_for_selector": "#chart svg"}\` | Waits for an element. |
| \`reduced_motion\` | \`{"reduced_motion": true}\` | \`prefers-reduced-motion: reduce\`. |
| \`user_agent\` | \`{"user_agent": "MyBot/1.0"}\` | The User-Agent of every request. |
| \`mobile\`, \`has_touch\` | \`{"width": 390, "height": 844, "mobile": true, "has_touch": true}\` | Mobile and touch emulation without a preset. |
| \`fail_on_http_error\` | \`{"fail_on_http_error": true}\` | A 4xx or 5xx target is a 502 \`target_error\`, not a capture of its error page. |
| \`block_requests\` | \`{"block_requests": ["*/analytics.js*"]}\` | Requests whose URL matches are not made. |
| \`headers\` | \`{"headers": {"X-Preview": "1"}}\` | Extra headers to the target's own origin only. |
| \`cookies\` | \`{"cookies": [{"name": "session", "value": "abc"}]}\` | Cookies in the jar before the page loads. |
| \`http_auth\` | \`{"http_auth": {"username": "me", "password": "secret"}}\` | Basic credentials to the target's origin. |
| \`block_ads\`, \`block_trackers\` | \`{"block_ads": true, "block_trackers": true}\` | EasyList and EasyPrivacy, shipped with the service. |
| \`block_cookie_banners\` | \`{"block_cookie_banners": true}\` | Consent banners refused and hidden (DuckDuckGo's autoconsent rules). |
| \`metadata\` | \`{"metadata": true}\` | The page's title, description, OpenGraph tags and icon in the answer. |
| \`format: "pdf"\`, \`pdf_paper\`, \`pdf_landscape\`, \`pdf_print_background\`, \`pdf_single_page\` | \`{"format": "pdf", "pdf_paper": "letter", "pdf_landscape": true, "pdf_print_background": false}\` | A PDF of the page (Pro); \`pdf_single_page: true\` makes one page as tall as the content. |
| \`response_type\` | \`{"response_type": "image"}\` | The image bytes as the 201's body. |
| \`async\`, \`webhook_url\` | \`{"async": true, "webhook_url": "https://you.example.com/hooks"}\` | Queued; the result by webhook (Pro). |
`;

if (import.meta.main) {
  const { site: documented, examples } = await loadExamples();
  const site = await startExampleSite();
  const { t, key } = await exampleApp(site);
  const made: Made[] = [];
  try {
    for (const example of examples) {
      const { bytes, made: m } = await runExample(
        t,
        key,
        localRequest(example, documented, site.origin),
      );
      const entry = { name: example.name, ...m };
      made.push(entry);
      await writeFile(path.join(DOCS, 'images', fileOf(entry)), bytes);
      process.stdout.write(`${fileOf(entry)} ${m.width}x${m.height}\n`);
    }
  } finally {
    await t.close();
    await site.close();
  }
  await writeFile(path.join(DOCS, 'images', 'options.json'), `${JSON.stringify(made, null, 2)}\n`);
  await writeFile(path.join(DOCS, 'options.md'), page(examples, made, documented));
}
