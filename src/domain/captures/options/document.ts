import { Type } from 'typebox';
import { sha256Hex } from '../../../lib/crypto.ts';
import { BOUNDS } from '../../bounds.ts';
import { AppError } from '../../errors.ts';
import { defineOption } from './define.ts';

const { maxHtmlBytes, maxMarkdownBytes } = BOUNDS.capture;
const kib = (bytes: number) => `${(bytes / 1024).toLocaleString('en-US')} KiB`;
const mib = (bytes: number) => `${bytes / 2 ** 20} MiB`;

/** A document's size is counted in UTF-8 bytes, as it travels (the schema bounds characters). */
function checkBytes(name: string, value: string, max: number, shown: string): void {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > max) {
    throw new AppError('invalid_request', `${name} may be at most ${shown} (got ${bytes} bytes)`);
  }
}

/** `html`: the document itself, shown in place of a page at a URL. */
export const html = defineOption({
  name: 'html',
  schema: Type.String({
    minLength: 1,
    maxLength: maxHtmlBytes,
    description:
      `An HTML document to capture instead of a url (at most ${mib(maxHtmlBytes)}). Exactly ` +
      'one of url, html or markdown. Everything it loads goes through the same address ' +
      'rules as a url capture; its relative links resolve against base_url (without it they ' +
      'load nothing). Request bodies with html or markdown may be up to ' +
      `${mib(BOUNDS.http.documentBodyBytes)}.`,
  }),
  resolve(value) {
    if (value === undefined) return { html: null };
    checkBytes('html', value, maxHtmlBytes, mib(maxHtmlBytes));
    return { html: value };
  },
  // The document's hash: two captures of one document share a cache entry, of two differ.
  cacheKey: (o) => (o.html === null ? undefined : sha256Hex(o.html)),
});

/** `markdown`: GitHub-flavoured Markdown, shown as a page in the service's own stylesheet. */
export const markdown = defineOption({
  name: 'markdown',
  schema: Type.String({
    minLength: 1,
    maxLength: maxMarkdownBytes,
    description:
      `GitHub-flavoured Markdown to capture instead of a url (at most ${kib(maxMarkdownBytes)}), ` +
      "rendered as a readable page in the service's stylesheet: light, or dark with " +
      'dark_mode. Exactly one of url, html or markdown; base_url as for html.',
  }),
  resolve(value) {
    if (value === undefined) return { markdown: null };
    checkBytes('markdown', value, maxMarkdownBytes, kib(maxMarkdownBytes));
    // Rendered by the browser (adapters/browser/page/in-page/markdown-page.ts), never on this
    // thread.
    return { markdown: value };
  },
  cacheKey: (o) => (o.markdown === null ? undefined : sha256Hex(o.markdown)),
});

/** `base_url`: where a document stands (its relative links resolve against it). */
export const baseUrl = defineOption({
  name: 'base_url',
  // Its checks are the target guard's, as for url (capture-target.ts).
  schema: Type.String({
    description:
      'With html or markdown: the absolute http(s) URL the document is shown at, which its ' +
      'relative links resolve against. Checked like url; nothing is fetched from it for the ' +
      'document itself.',
  }),
  resolve: () => ({}), // the navigation URL is the url option's part
  cacheKey: () => undefined, // in url's part: the document is shown at it
});
