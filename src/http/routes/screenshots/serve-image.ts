import { Type } from 'typebox';
import {
  CONTENT_EXTENSIONS,
  contentKindForExt,
  contentTypeForExt,
  FORMAT_EXTENSIONS,
} from '../../../domain/captures/formats.ts';
import { AppError } from '../../../domain/errors.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';

/**
 * A stored file's name: its token (22 characters, 128 bits) and its extension, an image's or
 * one of the page's content files (`content`) kept beside it.
 */
const FILE = new RegExp(
  `^([A-Za-z0-9_-]{22})\\.(${[...FORMAT_EXTENSIONS, ...CONTENT_EXTENSIONS].join('|')})$`,
);

/**
 * The policy a hosted file is served under. The page's HTML is the page's, hostile code
 * included, served from the service's own origin: sandboxed (an opaque origin, no scripts,
 * no forms) and allowed to load nothing, so it can neither run nor reach the dashboard's
 * cookies, nor call anything when opened. A PDF opens in the browser's viewer, which the
 * document embeds as its own object.
 */
function securityPolicy(ext: string): string {
  if (ext === 'pdf') return "default-src 'none'; object-src 'self'";
  if (contentKindForExt(ext) !== undefined) return "sandbox; default-src 'none'";
  return "default-src 'none'";
}

/**
 * Hosted images and content files. The record decides: expired, purged or deleted answers
 * 404 even if the bytes still linger in storage; caching headers end at `expires_at`.
 */
export function registerServeImage(app: App, deps: RouteDeps): void {
  app.get(
    '/images/:file',
    {
      schema: {
        tags: ['images'],
        summary: 'A hosted screenshot (URL from image_url), or its content (URLs from content)',
        params: Type.Object({ file: Type.String() }),
        response: {
          200: Type.Unsafe({ description: 'The image bytes, or the content file (UTF-8 text).' }),
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
      const kind = contentKindForExt(ext);
      const known =
        kind === undefined ? record?.ext === ext : record?.content?.kinds.includes(kind) === true;
      if (!record || !known || record.expiresAt <= now) throw notFound();
      const image = await deps.storage.get(`${token}.${ext}`);
      if (!image) throw notFound();
      const maxAge = Math.max(0, Math.floor((record.expiresAt - now) / 1000));
      return (
        reply
          .header('Content-Type', contentTypeForExt(ext) ?? 'application/octet-stream')
          .header('X-Content-Type-Options', 'nosniff')
          .header('Cache-Control', `public, max-age=${maxAge}, immutable`)
          .header('Expires', new Date(record.expiresAt).toUTCString())
          .header('Content-Security-Policy', securityPolicy(ext))
          // The page's own HTML is saved, not shown, where a browser ignores the sandbox.
          .header('Content-Disposition', ext === 'html' ? 'attachment' : 'inline')
          .send(image.body)
      );
    },
  );
}
