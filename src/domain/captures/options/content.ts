import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { CONTENT_KINDS, type ContentKind } from '../formats.ts';
import { defineOption } from './define.ts';

/** `content`: the page's DOM, visible text or Markdown, stored and hosted beside its image. */
export const content = defineOption({
  name: 'content',
  schema: Type.Array(Type.Unsafe<ContentKind>(Type.String({ enum: [...CONTENT_KINDS] })), {
    uniqueItems: true,
    maxItems: CONTENT_KINDS.length,
    description:
      'Keep the rendered page\'s content beside the image: "html" (its DOM as HTML), "text" ' +
      '(its visible text), "markdown" (its DOM as Markdown); any of them. Each is hosted ' +
      `with the image's retention, at most ${BOUNDS.capture.maxContentBytes / 2 ** 20} MiB ` +
      '(cut there, content_truncated). The answer adds content: {html?, text?, markdown?} URLs.',
  }),
  // In the table's order, whatever the request's: one key and one answer for one set.
  resolve: (value) => ({ content: CONTENT_KINDS.filter((k) => value?.includes(k) ?? false) }),
  cacheKey: (o) => (o.content.length === 0 ? undefined : o.content),
});
