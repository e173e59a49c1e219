/**
 * A capture body's two limits (docs/api.md, "HTML and Markdown"): 64 KiB, as every JSON body,
 * or up to 1.5 MiB when it carries a document (`html` or `markdown`). The parser takes the
 * larger one; once the body is parsed, one without a document over the smaller one is the
 * same 413 as any body over the limit. The size is the body's bytes as sent: Content-Length
 * (which the parser checks against what arrives), or for a chunked body, counted as it
 * passes.
 */
import { Transform, type TransformCallback } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BOUNDS } from '../domain/bounds.ts';
import { AppError } from '../domain/errors.ts';

const BODY_BYTES = new WeakMap<FastifyRequest, { bytes: number }>();

/** Counts a chunked body's bytes; the parser reads `receivedEncodedLength` as the size sent. */
class CountingStream extends Transform {
  receivedEncodedLength = 0;
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.receivedEncodedLength += chunk.length;
    done(null, chunk);
  }
}

async function measure(
  request: FastifyRequest,
  _reply: FastifyReply,
  payload: NodeJS.ReadableStream,
): Promise<NodeJS.ReadableStream> {
  const declared = Number(request.headers['content-length']);
  if (Number.isInteger(declared) && declared >= 0) {
    BODY_BYTES.set(request, { bytes: declared });
    return payload;
  }
  const counter = new CountingStream();
  const size = {
    get bytes() {
      return counter.receivedEncodedLength;
    },
  };
  BODY_BYTES.set(request, size);
  payload.on('error', (err) => counter.destroy(err));
  return payload.pipe(counter);
}

async function limitPlainBody(request: FastifyRequest): Promise<void> {
  const bytes = BODY_BYTES.get(request)?.bytes ?? 0;
  if (bytes <= BOUNDS.http.bodyBytes) return;
  const body = request.body as { html?: unknown; markdown?: unknown } | null;
  if (typeof body?.html === 'string' || typeof body?.markdown === 'string') return;
  throw new AppError(
    'payload_too_large',
    `request body is larger than ${BOUNDS.http.bodyBytes / 1024} KiB ` +
      `(up to ${BOUNDS.http.documentBodyBytes / 1024} KiB only with html or markdown)`,
  );
}

/** The route options that give a capture route both limits. */
export const captureBodyLimit = {
  bodyLimit: BOUNDS.http.documentBodyBytes,
  preParsing: measure,
  preValidation: limitPlainBody,
};
