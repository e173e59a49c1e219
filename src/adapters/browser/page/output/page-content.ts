/**
 * The page's content kept beside its image (`content`; docs/api.md, "The page's content"):
 * its DOM as HTML, its visible text, or its DOM as Markdown, read from the page at rest before
 * the capture changes anything (animations frozen, `hide_selectors`), in puppeteer's isolated
 * world (page-values.ts: the page's own built-ins cannot lie to it).
 *
 * Markdown is made in the page by Turndown (the maintained HTML-to-Markdown converter, with
 * Joplin's maintained fork of its GitHub-flavoured plugin: tables, task lists,
 * strikethrough), loaded into the isolated world from the npm packages' browser builds. Run
 * there, it reads the live DOM the browser already parsed: the service's own process never
 * parses a page of megabytes, and its event loop is not held by one.
 *
 * Each kind is one protocol message of at most BOUNDS.capture.maxContentBytes of UTF-8 as
 * base64 (about 6.7 MiB), cut in the page at a character's boundary: a page whose text is
 * larger, or made of characters JSON would escape sixfold, still fits the message bound.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { BOUNDS } from '../../../../domain/bounds.ts';
import type { ContentKind } from '../../../../domain/captures/formats.ts';
import type { PageContent, RenderOptions } from '../../../../domain/captures/renderer.ts';
import { AppError } from '../../../../domain/errors.ts';
import type { CaptureRun } from '../capture-run.ts';
import { isolatedWorld } from '../in-page/page-values.ts';

/** Where the isolated world keeps the converter once loaded (a global of that world only). */
const CONVERTER = '__shotsmithMarkdown';

let converterSource: string | null = null;

/**
 * The converter's program for the isolated world: Turndown's browser build and the GFM plugin
 * (CommonJS), each given the module object it expects, combined into one function of a node.
 */
function markdownConverter(): string {
  if (converterSource !== null) return converterSource;
  const require = createRequire(import.meta.url);
  const turndown = readFileSync(require.resolve('turndown/lib/turndown.browser.umd.js'), 'utf8');
  const gfm = readFileSync(require.resolve('@joplin/turndown-plugin-gfm'), 'utf8');
  converterSource = `(() => {
    const TurndownService = (() => { const module = { exports: {} }; const exports = module.exports;
      ${turndown}
      ; return module.exports; })();
    const plugin = (() => { const exports = {}; const module = { exports };
      ${gfm}
      ; return module.exports; })();
    const service = new TurndownService({
      headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', hr: '---',
    });
    service.use(plugin.gfm);
    service.remove(['script', 'style', 'noscript', 'template', 'head', 'iframe', 'object']);
    // What the reader sees: a copy of the node without the elements the page does not show
    // (display: none, visibility: hidden, content-visibility), which Turndown cannot tell on
    // its own (it works on a detached copy, where nothing has a style).
    const visible = (root) => {
      const copy = root.cloneNode(false);
      const stack = [[root, copy]];
      while (stack.length > 0) {
        const [from, to] = stack.pop();
        for (const child of from.childNodes) {
          if (child.nodeType === 1) {
            if (typeof child.checkVisibility === 'function' &&
                !child.checkVisibility({ visibilityProperty: true }) &&
                getComputedStyle(child).display !== 'contents') continue;
            const made = child.cloneNode(false);
            to.appendChild(made);
            stack.push([child, made]);
          } else if (child.nodeType === 3) {
            to.appendChild(child.cloneNode(false));
          }
        }
      }
      return copy;
    };
    globalThis.${CONVERTER} = (node) => {
      try {
        return { text: service.turndown(visible(node)), failed: false };
      } catch {
        // A DOM too deep for the converter's recursion (a hostile page): nothing, said as cut.
        return { text: '', failed: true };
      }
    };
    return true;
  })()`;
  return converterSource;
}

/**
 * Runs in the isolated world: one kind of the document as UTF-8, cut at `maxBytes` on a
 * character's boundary, as base64. Self-contained (serialised into the page).
 */
function readPageContent(
  kind: string,
  maxBytes: number,
  converter: string,
): { base64: string; truncated: boolean } {
  let text = '';
  if (kind === 'html') {
    const type = document.doctype;
    const doctype = type ? `<!DOCTYPE ${type.name}>\n` : '';
    text = doctype + document.documentElement.outerHTML;
  } else if (kind === 'text') {
    text = (document.body ?? document.documentElement).innerText ?? '';
  }
  let truncated = false;
  if (kind === 'markdown') {
    const convert = (
      globalThis as unknown as Record<string, (node: Node) => { text: string; failed: boolean }>
    )[converter];
    const made = convert ? convert(document.body ?? document.documentElement) : null;
    text = made?.text ?? '';
    truncated = made === null || made.failed;
  }
  // A character is at least one byte: no more characters than bytes are ever needed.
  if (text.length > maxBytes) {
    text = text.slice(0, maxBytes);
    truncated = true;
  }
  const last = text.charCodeAt(text.length - 1);
  if (truncated && last >= 0xd800 && last <= 0xdbff) text = text.slice(0, -1);
  let bytes = new TextEncoder().encode(text);
  if (bytes.length > maxBytes) {
    truncated = true;
    let end = maxBytes;
    // Back to the start of the character the cut fell in, unless it ends exactly there.
    let lead = end - 1;
    while (lead > 0 && ((bytes[lead] ?? 0) & 0xc0) === 0x80) lead--;
    const first = bytes[lead] ?? 0;
    const length = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
    if (lead + length > end) end = lead;
    bytes = bytes.subarray(0, end);
  }
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return { base64: btoa(binary), truncated };
}

const unexpected = () => new AppError('internal_error', 'the page returned unexpected content');

/** Each kind `content` asks for, read from the page as it is now. */
export async function readContent(run: CaptureRun, o: RenderOptions): Promise<PageContent> {
  const out: PageContent = {};
  if (o.content.length === 0) return out;
  run.enter('capture', 'reading the page content');
  const world = isolatedWorld(run.page);
  const max = BOUNDS.capture.maxContentBytes;
  for (const kind of o.content as readonly ContentKind[]) {
    if (kind === 'markdown') await run.step(world.evaluate(markdownConverter()));
    const read = (await run.step(world.evaluate(readPageContent, kind, max, CONVERTER))) as unknown;
    const value = read as { base64?: unknown; truncated?: unknown } | null;
    if (typeof value?.base64 !== 'string' || typeof value.truncated !== 'boolean') {
      throw unexpected();
    }
    const bytes = Buffer.from(value.base64, 'base64');
    if (bytes.length > max) throw unexpected();
    out[kind] = { bytes, truncated: value.truncated };
  }
  return out;
}
