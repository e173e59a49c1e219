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
 * time, bounded by the render deadline and its memory watchdog, like a page that spins. Raw
 * HTML in the Markdown stays, as GitHub keeps most of it (inserted as markup, its scripts do
 * not run); the page's own scripts are removed once it is drawn, so the page's DOM (`content`)
 * is the rendered Markdown alone.
 */
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

let markedSource: string | null = null;

/** marked's browser build (its package exports only the ES module; the file is beside it). */
function markedBrowserBuild(): string {
  if (markedSource !== null) return markedSource;
  const require = createRequire(import.meta.url);
  const root = path.dirname(require.resolve('marked/package.json'));
  const source = readFileSync(path.join(root, 'lib', 'marked.umd.js'), 'utf8');
  // Inline in a script element: nothing in it may end that element early.
  markedSource = source.replace(/<\/(script)/gi, '<\\/$1');
  return markedSource;
}

/** JSON as a script's literal: `<` escaped, so no text in it can close the element. */
const scriptLiteral = (value: unknown): string =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

/** The page that shows the Markdown in the service's stylesheet once the browser runs it. */
export function markdownPage(source: string): string {
  const render =
    'try{document.querySelector("main").innerHTML=marked.parse(' +
    `${scriptLiteral(source)},{gfm:true,breaks:false,async:false})}` +
    'catch(e){document.querySelector("main").textContent="This Markdown could not be rendered."}' +
    'for(const s of document.querySelectorAll("script"))s.remove();';
  return (
    '<!doctype html><html><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${escapeHtml(titleOf(source))}</title><style>${STYLESHEET}</style></head>` +
    `<body><main></main><script>${markedBrowserBuild()}</script><script>${render}</script>` +
    '</body></html>'
  );
}
