/**
 * The image formats and what each is once stored: the file extension of its storage key and
 * image URL, and the Content-Type it is uploaded and served with. The one table of them: the
 * renderer's `ImageFormat`, the `format` option's values, the stored keys (render-and-store.ts,
 * adapters/storage/image-keys.ts) and image serving (http/routes/screenshots/serve-image.ts)
 * all read it.
 */
export const FORMATS = {
  png: { ext: 'png', contentType: 'image/png' },
  jpeg: { ext: 'jpg', contentType: 'image/jpeg' },
  webp: { ext: 'webp', contentType: 'image/webp' },
  pdf: { ext: 'pdf', contentType: 'application/pdf' },
} as const;

export type ImageFormat = keyof typeof FORMATS;

/** Every format, in the table's order (the order the API document lists them in). */
export const IMAGE_FORMATS = Object.keys(FORMATS) as ImageFormat[];

/** The extensions images are stored and served under (`jpg` for jpeg). */
export const FORMAT_EXTENSIONS: readonly string[] = IMAGE_FORMATS.map((f) => FORMATS[f].ext);

const CONTENT_TYPES = new Map<string, string>(
  IMAGE_FORMATS.map((f) => [FORMATS[f].ext, FORMATS[f].contentType]),
);

/** The Content-Type of an image stored under `ext`; undefined for no format's extension. */
export const contentTypeForExt = (ext: string): string | undefined => CONTENT_TYPES.get(ext);
