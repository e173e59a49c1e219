import { Type } from 'typebox';
import type { MediaType } from '../renderer.ts';
import { defineOption } from './define.ts';

export const mediaType = defineOption({
  name: 'media_type',
  schema: Type.Unsafe<MediaType>(
    Type.String({
      enum: ['screen', 'print'],
      description: 'The CSS media type the page is rendered for. Default screen.',
    }),
  ),
  resolve: (value) => ({ mediaType: value ?? 'screen' }),
  cacheKey: (o) => (o.mediaType === 'screen' ? undefined : o.mediaType),
});
