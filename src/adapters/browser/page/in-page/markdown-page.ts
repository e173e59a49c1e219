/**
 * `markdown` captures: the page the browser is given for GitHub-flavoured Markdown, rendered
 * by `marked` (maintained, GFM tables, task lists, strikethrough and autolinks; the docs site
 * uses it too) in the page itself, into the service's own readable stylesheet. The page
 * follows the colour scheme the capture emulates: light, or dark with `dark_mode`
 * (prefers-color-scheme), so it needs no option.
 *
 * Rendered in the page, not in the service: marked is not linear on every input (256 KiB of
 * `_a` took 49 s, deeply nested quotes overflow its stack), and in the service that time would
 * hold the API's event loop for every tenant. In the page it is the capture's own renderer's
 * time, bounded by the render deadline and its memory watchdog, like a page that spins.
 *
 * No script of the document's runs (docs/api.md, "HTML and Markdown"; docs/security.md): a
 * Markdown capture may be untrusted text rendered with the caller's `cookies`, `headers` or
 * `http_auth` at its `base_url`, where a script could read the signed-in origin and send it
 * out. Two layers, each enough alone for scripts:
 *
 * - Raw HTML is sanitised with an allowlist, as GitHub does, by DOMPurify (Cure53's: maintained,
 *   widely used and audited, no runtime dependencies, about 30 KB minified). It runs
 *   here, in the page, on marked's output, before anything is inserted: it parses with the very
 *   parser that renders (an inert document, where nothing loads or fires), so there is no
 *   second parser to disagree with, and it needs no DOM in the service, where Markdown is never
 *   rendered (above). `sanitize-html` (htmlparser2) or DOMPurify over jsdom would need both.
 *   Its HTML and SVG profiles (no MathML) drop every event handler attribute, script, iframe
 *   (so `srcdoc`), frame, object, embed, base, meta, link, SVG's animate/set/use/foreignObject,
 *   and javascript: and other unlisted URLs (data: only on images and media); on top of that
 *   `<style>` (document-wide CSS and its @import, as GitHub drops it), forms, and every SVG
 *   animation element (they only fire begin/end events; a screenshot is still). `style`
 *   attributes stay. What survives is returned as nodes, not HTML to parse again.
 * - The page's Content-Security-Policy (a <meta> before anything else): only the page's own
 *   three scripts run, by a nonce drawn for each page, so no inline handler, javascript: URL,
 *   injected script or `srcdoc` frame (a srcdoc document inherits its parent's policy) runs;
 *   nothing is framed, embedded or fetched by script; no <base>, no form submission;
 *   stylesheets only inline (an @import loads nothing); images and media from anywhere, through
 *   the egress proxy like any page's. A meta refresh is not a policy's business: the
 *   sanitiser removes it. Page.setBypassCSP turns the policy off with `styles`, `scripts`,
 *   `block_ads` or `block_cookie_banners` (option-steps.ts), and then the sanitiser stands alone.
 *
 * The service's own page helpers are untouched by either: they run through the DevTools
 * protocol (evaluations, isolated worlds, document scripts), which the page's policy does not
 * govern (the caller's `scripts` go through eval, which it would refuse: that option sets the
 * policy aside, above). JavaScript is not switched off (Emulation.setScriptExecutionDisabled):
 * marked and DOMPurify are the page's own scripts. The page's scripts are removed once it is
 * drawn, so the page's DOM (`content`) is the rendered Markdown alone.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** A readable column: system fonts, comfortable measure, tables and code that do not overflow. */
const STYLESHEET = `
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #ffffff;
  --line: #d1d9e0; --code-bg: #f6f8fa; --link: #0969da; --quote: #59636e; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --line: #3d444d;
    --code-bg: #151b23; --link: #4493f8; --quote: #9198a1; }
}
* { box-sizing: border-box; }
html { background: var(--bg); color: var(--fg); }
body { margin: 0; font: 16px/1.6 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial,
  sans-serif, "Apple Color Emoji", "Noto Color Emoji"; overflow-wrap: break-word; }
main { max-width: 860px; margin: 0 auto; padding: 32px 40px 48px; }
h1, h2, h3, h4, h5, h6 { margin: 1.5em 0 0.6em; font-weight: 600; line-height: 1.25; }
h1 { font-size: 2em; padding-bottom: 0.3em; border-bottom: 1px solid var(--line); }
h2 { font-size: 1.5em; padding-bottom: 0.3em; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.25em; } h4 { font-size: 1em; } h5 { font-size: 0.875em; }
h6 { font-size: 0.85em; color: var(--muted); }
main > :first-child { margin-top: 0; }
p, ul, ol, blockquote, pre, table, dl { margin: 0 0 16px; }
a { color: var(--link); text-decoration: none; }
img { max-width: 100%; }
hr { height: 2px; border: 0; background: var(--line); margin: 24px 0; }
blockquote { padding: 0 1em; color: var(--quote); border-left: 4px solid var(--line); }
ul, ol { padding-left: 2em; }
li + li { margin-top: 0.25em; }
li > input[type="checkbox"] { margin: 0 0.4em 0 -1.3em; vertical-align: middle; }
ul:has(> li > input[type="checkbox"]) { list-style: none; }
code, pre { font: 85%/1.45 ui-monospace, "Liberation Mono", "DejaVu Sans Mono", monospace; }
code { padding: 0.2em 0.4em; border-radius: 6px; background: var(--code-bg); }
pre { padding: 16px; overflow: auto; border-radius: 6px; background: var(--code-bg); }
pre code { padding: 0; background: none; font-size: 100%; white-space: pre; }
table { display: block; max-width: 100%; overflow: auto; border-collapse: collapse; }
th, td { padding: 6px 13px; border: 1px solid var(--line); }
th { font-weight: 600; }
tr:nth-child(2n) td { background: var(--code-bg); }
del { color: var(--muted); }
`
  .trim()
  .replace(/\n\s*/g, ' ');

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string,
  );

/** The longest title taken from a heading (metadata texts are cut at 1,024 anyway). */
const TITLE_MAX = 200;
const HEADING_START = /^ {0,3}#{1,6}[ \t]+/;

/**
 * The page's title: its first ATX heading's text, so a capture's `metadata` has one. A plain
 * scan, line by line: a pattern with a lazy group before `[ \t#]*$` backtracks quadratically on
 * a long line of spaces, and this runs on the API's thread for a caller's 256 KiB.
 */
function titleOf(source: string): string {
  let start = 0;
  while (start < source.length) {
    let end = source.indexOf('\n', start);
    if (end === -1) end = source.length;
    const line = source.slice(start, Math.min(end, start + 4 * TITLE_MAX));
    const opening = HEADING_START.exec(line);
    if (opening) {
      let text = line.slice(opening[0].length);
      let cut = text.length;
      while (cut > 0 && ' \t#'.includes(text[cut - 1] ?? '')) cut--;
      text = text.slice(0, cut).replace(/[*_`[\]]/g, '');
      return text.slice(0, TITLE_MAX);
    }
    start = end + 1;
  }
  return '';
}

const require = createRequire(import.meta.url);
const browserBuilds = new Map<string, string>();

/**
 * A package's browser build (UMD), read once, to inline in a script element: nothing in it may
 * end that element early, and its source map comment is dropped (no map stands beside a page).
 */
function browserBuild(file: string): string {
  const cached = browserBuilds.get(file);
  if (cached !== undefined) return cached;
  const source = readFileSync(file, 'utf8')
    .replace(/\n\/\/# sourceMappingURL=\S*\s*$/, '\n')
    .replace(/<\/(script)/gi, '<\\/$1');
  browserBuilds.set(file, source);
  return source;
}

/** marked's browser build (its package exports only the ES module; the file is beside it). */
const MARKED_BUILD = path.join(
  path.dirname(require.resolve('marked/package.json')),
  'lib',
  'marked.umd.js',
);
/** DOMPurify's browser build, which its package exports. */
const DOMPURIFY_BUILD = require.resolve('dompurify/purify.min.js');

/** JSON as a script's literal: `<` escaped, so no text in it can close the element. */
const scriptLiteral = (value: unknown): string =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

/**
 * DOMPurify's configuration for marked's output (the header says why each part): its HTML, SVG
 * and SVG filter profiles, less the elements below; the result as a fragment of nodes.
 */
export const SANITISER_CONFIG = {
  USE_PROFILES: { html: true, svg: true, svgFilters: true },
  FORBID_TAGS: ['style', 'form', 'animatecolor', 'animatemotion', 'animatetransform'],
  RETURN_DOM_FRAGMENT: true,
} as const;

/**
 * The page's policy (the header says why each part). `default-src 'none'` covers what is not
 * named: scripts' requests, frames (srcdoc ones inherit this policy), objects, workers, fonts.
 */
export function markdownPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    "style-src 'unsafe-inline'",
    'img-src * data:',
    'media-src * data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/**
 * Test seams only, so that each layer is shown to hold alone: `sanitise: false` inserts
 * marked's output as it is, `policy: false` leaves the policy out. The service uses neither.
 */
export interface MarkdownPageOptions {
  sanitise?: boolean;
  policy?: boolean;
}

/** The page that shows the Markdown in the service's stylesheet once the browser runs it. */
export function markdownPage(source: string, options: MarkdownPageOptions = {}): string {
  const nonce = randomBytes(18).toString('base64');
  // The page's own scripts are listed before any of the document's nodes exist, and removed
  // after. DOMPurify answers the markup unchanged where it cannot work (never in Chromium): a
  // string is refused, never parsed. Without the sanitiser (tests) the markup goes in as is.
  const insert =
    options.sanitise === false
      ? 'main.innerHTML=html;'
      : `const nodes=DOMPurify.sanitize(html,${scriptLiteral(SANITISER_CONFIG)});` +
        'if(!DOMPurify.isSupported||!(nodes instanceof DocumentFragment))throw new Error("not sanitised");' +
        'main.replaceChildren(nodes);';
  const render =
    '(()=>{const main=document.querySelector("main");const own=[...document.scripts];' +
    `try{const html=marked.parse(${scriptLiteral(source)},{gfm:true,breaks:false,async:false});` +
    `${insert}}` +
    'catch{main.textContent="This Markdown could not be rendered."}' +
    'for(const s of own)s.remove();})();';
  return (
    '<!doctype html><html><head><meta charset="utf-8">' +
    (options.policy === false
      ? ''
      : `<meta http-equiv="Content-Security-Policy" content="${markdownPolicy(nonce)}">`) +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${escapeHtml(titleOf(source))}</title><style>${STYLESHEET}</style></head>` +
    `<body><main></main><script nonce="${nonce}">${browserBuild(MARKED_BUILD)}</script>` +
    `<script nonce="${nonce}">${browserBuild(DOMPURIFY_BUILD)}</script>` +
    `<script nonce="${nonce}">${render}</script></body></html>`
  );
}
