import { Type } from 'typebox';
import { contentTypeForExt, FORMAT_EXTENSIONS } from '../../../domain/captures/formats.ts';
import { AppError } from '../../../domain/errors.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';

/** A stored image's file name: its token (22 characters, 128 bits) and its extension. */
const FILE = new RegExp(`^([A-Za-z0-9_-]{22})\\.(${FORMAT_EXTENSIONS.join('|')})$`);

/**
 * Hosted images. The record decides: expired, purged or deleted answers 404 even if the
 * bytes still linger in storage; caching headers end at `expires_at`.
 */
export function registerServeImage(app: App, deps: RouteDeps): void {
  app.get(
    '/images/:file',
    {
      schema: {
        tags: ['images'],
        summary: 'A hosted screenshot (URL from image_url)',
        params: Type.Object({ file: Type.String() }),
        response: {
          200: Type.Unsafe({ description: 'The image bytes.' }),
          ...errorResponses(404, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const match = FILE.exec(request.params.file);
      const notFound = () => new AppError('not_found', 'image not found');
      if (!match) throw notFound();
      const [, token = '', ext = ''] = match;
      const record = await deps.ctx.store.screenshots.findByToken(token);
      const now = deps.ctx.clock();
      if (!record || record.ext !== ext || record.expiresAt <= now) throw notFound();
      const image = await deps.storage.get(`${token}.${ext}`);
      if (!image) throw notFound();
      const maxAge = Math.max(0, Math.floor((record.expiresAt - now) / 1000));
      return (
        reply
          .header('Content-Type', contentTypeForExt(ext) ?? 'application/octet-stream')
          .header('X-Content-Type-Options', 'nosniff')
          .header('Cache-Control', `public, max-age=${maxAge}, immutable`)
          .header('Expires', new Date(record.expiresAt).toUTCString())
          // A PDF opens in the browser's viewer, which the document embeds as its own object.
          .header(
            'Content-Security-Policy',
            ext === 'pdf' ? "default-src 'none'; object-src 'self'" : "default-src 'none'",
          )
          .send(image.body)
      );
    },
  );
}
