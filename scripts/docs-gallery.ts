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
import { type CorpusServer, startCorpusServer } from '../test/browser/corpus/server.ts';
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
  const logo = await readFile(path.join(dir, 'logo.svg'));
  return startSite({
    // The html example's relative image, loaded from its base_url.
    '/logo.svg': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(logo);
    },
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
  return proApp({ EGRESS_ALLOWLIST: site.hostPort });
}

/** An app (with `env` over the defaults) and a Pro key on it. */
async function proApp(env: Record<string, string>): Promise<{ t: TestApp; key: string }> {
  const t = await startApp({
    db: 'sqlite',
    env,
    plans: { pro: { rate_per_minute: 1000 } },
    // Nothing but the local pages: every name another host would need is refused unresolved.
    resolver: {
      resolve: (name: string) => Promise.reject(new Error(`${name}: not resolved here`)),
    },
  });
  const user = await signUp(t);
  await t.deps.ctx.store.users.setPlan(user.id, 'pro', Date.now());
  return { t, key: (await createKey(t, user.cookie)).key };
}

const EXT: Record<string, string> = { png: 'png', jpeg: 'jpg', webp: 'webp' };
const fileOf = (m: Made) => `options-${m.name}.${EXT[m.format] ?? m.format}`;

function page(examples: Example[], made: Made[], documented: string, beforeAfter: string): string {
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
    beforeAfter,
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
| \`fail_on\` | \`{"fail_on": ["blank_image", "fonts_not_loaded"]}\` | A capture with one of these warnings is a 422 \`capture_rejected\` naming them (nothing stored, no quota spent), not a 201 carrying them ([api.md](api.md#warnings)). |
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

/**
 * Before and after: third-party pages of the test corpus (docs/corpus.md, served from their
 * npm packages with every other host cut off), each captured as the service does it now and
 * as it did before the change the section is about.
 */
interface BeforeAfter {
  name: string;
  title: string;
  text: string;
  pkg: string;
  path: string;
  documented: string;
  request: Record<string, unknown>;
  before: { caption: string; request?: Record<string, unknown>; env?: Record<string, string> };
  after: string;
}

const BEFORE_AFTER: BeforeAfter[] = [
  {
    name: 'chart',
    title: 'A dashboard whose charts animate (the page at rest)',
    text:
      "Start Bootstrap's SB Admin 2 dashboard (`startbootstrap-sb-admin-2`, MIT): its Chart.js " +
      'charts grow for about a second after load, drawn by `requestAnimationFrame`. The capture ' +
      'now waits for the page to come to rest ([The page at rest](api.md#the-page-at-rest)).',
    pkg: 'startbootstrap-sb-admin-2',
    path: 'index.html',
    documented: 'https://dashboard.example/',
    request: { url: 'https://dashboard.example/', width: 1280, height: 800 },
    before: {
      caption: 'Before: taken as soon as the network was quiet, the charts part drawn.',
      env: { SETTLE_MAX_MS: '0' },
    },
    after: 'After: the same request, the charts at rest.',
  },
  {
    name: 'phone',
    title: 'A page without a viewport tag on a phone (full page)',
    text:
      'WOW.js\'s demo page (`wow.js`, MIT) has no `<meta name="viewport">`: a phone lays it ' +
      'out 980 px wide and zooms out to its screen. A full-page capture now keeps that zoom; ' +
      'before, it showed the left 40 % of the layout at full size, which the "before" image ' +
      "repeats with a `clip` of the phone's width.",
    pkg: 'wow.js',
    path: 'demo.html',
    documented: 'https://reveal.example/',
    request: { url: 'https://reveal.example/', device: 'iphone-15', full_page: true },
    before: {
      caption: 'Before: the left 393 CSS px of the layout, at full size.',
      request: {
        url: 'https://reveal.example/',
        device: 'iphone-15',
        clip: { x: 0, y: 0, width: 393, height: 2200 },
      },
    },
    after: 'After: the whole layout, zoomed out as the phone shows it.',
  },
];

async function makeBeforeAfter(): Promise<string> {
  const corpus: CorpusServer = await startCorpusServer(BEFORE_AFTER.map((b) => b.pkg));
  const allow = { EGRESS_ALLOWLIST: new URL(corpus.origin).host };
  const apps = new Map<string, { t: TestApp; key: string }>();
  const appFor = async (env: Record<string, string> = {}) => {
    const id = JSON.stringify(env);
    let app = apps.get(id);
    if (!app) {
      app = await proApp({ ...allow, ...env });
      apps.set(id, app);
    }
    return app;
  };
  const sections: string[] = [];
  try {
    for (const b of BEFORE_AFTER) {
      const local = corpus.url(b.pkg, b.path);
      const swap = (request: Record<string, unknown>) =>
        JSON.parse(JSON.stringify(request).replaceAll(b.documented, local));
      const shots: Array<{ label: string; caption: string; request: Record<string, unknown> }> = [
        { label: 'before', caption: b.before.caption, request: b.before.request ?? b.request },
        { label: 'after', caption: b.after, request: b.request },
      ];
      const lines = [`### ${b.title}`, '', b.text, ''];
      for (const shot of shots) {
        const { t, key } = await appFor(shot.label === 'before' ? b.before.env : {});
        const { bytes, made } = await runExample(t, key, swap(shot.request));
        const file = `before-after-${b.name}-${shot.label}.${EXT[made.format] ?? made.format}`;
        await writeFile(path.join(DOCS, 'images', file), bytes);
        process.stdout.write(`${file} ${made.width}x${made.height}\n`);
        const how =
          shot.label === 'before' && b.before.env
            ? ` With \`${Object.entries(b.before.env)
                .map(([k, v]) => `${k}=${v}`)
                .join(' ')}\` on the server, as the service was before.`
            : '';
        lines.push(
          '```json',
          JSON.stringify(shot.request, null, 2),
          '```',
          '',
          `![${shot.caption}](images/${file})`,
          '',
          `*${shot.caption}${how} ${made.format.toUpperCase()}, ${made.width} x ${made.height} pixels.*`,
          '',
        );
      }
      sections.push(lines.join('\n'));
    }
  } finally {
    for (const { t } of apps.values()) await t.close();
    await corpus.close();
  }
  return [
    '## Before and after',
    '',
    'Real pages nobody here wrote, from the test corpus (`docs/corpus.md` in the repository): what',
    'the service made of them before a change and after it. `npm run docs:gallery` makes these',
    `too, with ${BEFORE_AFTER.map((b) => `\`${b.documented}\``).join(' and ')} standing for the`,
    "packages' pages served on the same machine.",
    '',
    ...sections,
  ].join('\n');
}

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
  const beforeAfter = await makeBeforeAfter();
  await writeFile(path.join(DOCS, 'options.md'), page(examples, made, documented, beforeAfter));
}
