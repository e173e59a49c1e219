import { randomToken } from '../../lib/crypto.ts';
import { HOUR_MS } from '../../lib/time.ts';
import { AppError } from '../errors.ts';
import type { Plan } from '../plans.ts';
import type { ScreenshotRecord, StoredContent } from '../store.ts';
import { CONTENT_FILES, CONTENT_KINDS, FORMATS } from './formats.ts';
import type { CaptureContext } from './ports.ts';
import type { RenderClient, RenderOptions } from './renderer.ts';
import { rejectionMessage } from './warnings.ts';

/**
 * Renders, stores the image (and the page's content files, `content`) under an unguessable
 * token (128 random bits), then records it. Nothing is left behind on failure: files whose
 * record could not be written are deleted.
 * A render with a warning its `failOn` names is a 422 `capture_rejected` before anything is
 * stored (the caller gives its unit back, as for any failure).
 */
export async function renderAndStore(
  ctx: CaptureContext,
  options: {
    userId: number | null;
    /** Whose render it is: fair share of the slots, and no browser context shared with others. */
    client: RenderClient;
    plan: Plan;
    render: RenderOptions;
    cacheKey: string | null;
    signal: AbortSignal;
  },
): Promise<ScreenshotRecord & { renderMs: number; image: Buffer }> {
  const started = ctx.clock();
  const result = await ctx.renderer.render(options.render, {
    deadline: started + ctx.renderTimeoutMs,
    signal: options.signal,
    client: options.client,
  });
  const rejected = result.warnings.filter((w) => options.render.failOn.includes(w.code));
  if (rejected.length > 0) {
    throw new AppError('capture_rejected', rejectionMessage(rejected), {
      body: { warnings: rejected },
      exposeCode: true,
    });
  }
  const now = ctx.clock();
  const expiresAt = now + options.plan.retention_hours * HOUR_MS;
  const token = randomToken(16);
  const { ext, contentType } = FORMATS[result.format];
  const kinds = CONTENT_KINDS.filter((k) => result.content[k] !== undefined);
  const content: StoredContent | null =
    kinds.length === 0
      ? null
      : { kinds, truncated: kinds.some((k) => result.content[k]?.truncated === true) };
  // The image and its content files: every key is tried, and on any failure all are deleted.
  const files = [
    { key: `${token}.${ext}`, body: result.image, contentType },
    ...kinds.map((k) => ({
      key: `${token}.${CONTENT_FILES[k].ext}`,
      body: result.content[k]?.bytes ?? Buffer.alloc(0),
      contentType: CONTENT_FILES[k].contentType,
    })),
  ];
  const removeAll = () => Promise.all(files.map((f) => ctx.storage.delete(f.key).catch(() => {})));
  const stored = await Promise.allSettled(
    files.map((f) =>
      ctx.storage.put(f.key, f.body, {
        contentType: f.contentType,
        expiresAt: new Date(expiresAt),
      }),
    ),
  );
  const failed = stored.find((s) => s.status === 'rejected');
  if (failed) {
    await removeAll();
    throw failed.reason;
  }
  try {
    const record = await ctx.store.screenshots.insert({
      userId: options.userId,
      token,
      ext,
      url: options.render.url,
      format: result.format,
      width: result.width,
      height: result.height,
      viewportWidth: options.render.width,
      viewportHeight: options.render.height,
      fullPage: options.render.fullPage,
      quality: options.render.quality,
      deviceScaleFactor: options.render.deviceScaleFactor,
      truncated: result.truncated,
      warnings: result.warnings,
      listable: options.plan.listable,
      cacheKey: options.cacheKey,
      targetStatus: result.targetStatus,
      metadata: result.metadata,
      content,
      createdAt: now,
      expiresAt,
    });
    return { ...record, renderMs: result.renderMs, image: result.image };
  } catch (err) {
    await removeAll();
    throw err;
  }
}
