/**
 * `markdown` captures: GitHub-flavoured Markdown rendered by `marked` (maintained, GFM tables,
 * task lists, strikethrough and autolinks; the docs site uses it too) into a whole HTML page in
 * the service's own readable stylesheet. The page follows the colour scheme the capture
 * emulates: light, or dark with `dark_mode` (prefers-color-scheme), so rendering needs no
 * option. Raw HTML in the Markdown stays, as GitHub keeps most of it: the document is the
 * caller's own, and it renders in the same isolated page under the same egress rules as
 * `html`.
 */
import { Marked } from 'marked';

const marked = new Marked({ gfm: true, breaks: false });

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

/** The page's title: its first heading's text, so a capture's `metadata` has one. */
function titleOf(source: string): string {
  const heading = /^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$/m.exec(source)?.[1] ?? '';
  return heading.replace(/[*_`[\]]/g, '').slice(0, 200);
}

/** The Markdown as a whole HTML page in the service's stylesheet. */
export function markdownDocument(source: string): string {
  const body = marked.parse(source, { async: false });
  return (
    '<!doctype html><html><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${escapeHtml(titleOf(source))}</title><style>${STYLESHEET}</style></head>` +
    `<body><main>${body}</main></body></html>`
  );
}
