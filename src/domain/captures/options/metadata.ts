import { Type } from 'typebox';
import { defineOption } from './define.ts';

export const metadata = defineOption({
  name: 'metadata',
  schema: Type.Boolean({
    description:
      'The 201 also carries `metadata`: the page title, description, final URL, HTTP status, ' +
      'Open Graph title, description and image, and icon URL (absent values are null).',
  }),
  resolve: (value) => ({ metadata: value ?? false }),
  // A result with metadata is its own entry, so a hit always has what the request asks for.
  cacheKey: (o) => (o.metadata ? true : undefined),
});
