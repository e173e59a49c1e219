import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { AppError } from '../../errors.ts';
import type { ClipRect } from '../renderer.ts';
import { defineOption } from './define.ts';

const coordinate = (description: string) =>
  Type.Number({ minimum: 0, maximum: BOUNDS.capture.maxClipCoordinate, description });
const extent = (description: string) =>
  Type.Number({ minimum: 1, maximum: BOUNDS.capture.maxClipCoordinate, description });

export const clip = defineOption({
  name: 'clip',
  schema: Type.Unsafe<ClipRect>(
    Type.Object(
      {
        x: coordinate('CSS px from the left of the page.'),
        y: coordinate('CSS px from the top of the page.'),
        width: extent('CSS px.'),
        height: extent('CSS px.'),
      },
      {
        additionalProperties: false,
        description:
          'A region of the page, in CSS px of the page (not of the viewport), captured alone. ' +
          'Not with full_page or selector. Cut to the image bounds (truncated) when larger.',
      },
    ),
  ),
  resolve(value, { resolved }) {
    if (value !== undefined && (resolved.fullPage || (resolved.selector ?? null) !== null)) {
      throw new AppError('invalid_request', 'clip is not allowed with full_page or selector');
    }
    return { clip: value ?? null };
  },
  cacheKey: (o) => (o.clip ? [o.clip.x, o.clip.y, o.clip.width, o.clip.height] : undefined),
});
