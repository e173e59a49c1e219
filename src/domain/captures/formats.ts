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

/**
 * The page's content stored beside its image (`content`; docs/api.md, "The page's content"):
 * the same token, its own extension, served like the image under the same retention.
 */
export const CONTENT_FILES = {
  html: { ext: 'html', contentType: 'text/html; charset=utf-8' },
  text: { ext: 'txt', contentType: 'text/plain; charset=utf-8' },
  markdown: { ext: 'md', contentType: 'text/markdown; charset=utf-8' },
} as const;

export type ContentKind = keyof typeof CONTENT_FILES;

/** Every content kind, in the table's order (the order answers and keys list them in). */
export const CONTENT_KINDS = Object.keys(CONTENT_FILES) as ContentKind[];

/** The extensions content is stored and served under. */
export const CONTENT_EXTENSIONS: readonly string[] = CONTENT_KINDS.map((k) => CONTENT_FILES[k].ext);

/** The content kind stored under `ext`; undefined for an image's or none. */
export const contentKindForExt = (ext: string): ContentKind | undefined =>
  CONTENT_KINDS.find((k) => CONTENT_FILES[k].ext === ext);

const CONTENT_TYPES = new Map<string, string>([
  ...IMAGE_FORMATS.map((f) => [FORMATS[f].ext, FORMATS[f].contentType] as const),
  ...CONTENT_KINDS.map((k) => [CONTENT_FILES[k].ext, CONTENT_FILES[k].contentType] as const),
]);

/** The Content-Type of a file stored under `ext` (an image or content); undefined for none. */
export const contentTypeForExt = (ext: string): string | undefined => CONTENT_TYPES.get(ext);

/** Every storage key of a record: its image, then its content files. */
export function storedKeys(record: {
  token: string;
  ext: string;
  content: { kinds: readonly ContentKind[] } | null;
}): string[] {
  return [
    `${record.token}.${record.ext}`,
    ...(record.content?.kinds ?? []).map((k) => `${record.token}.${CONTENT_FILES[k].ext}`),
  ];
}
