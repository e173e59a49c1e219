/**
 * The browser adapter's face: the service's renderer (Chromium behind the egress proxy,
 * started on first use), which the composition root builds (src/browser-deps.ts). Inside, the
 * rooms import only downwards: pool/ -> page/ -> process/ (README.md).
 */
export { type BrowserRendererOptions, createBrowserRenderer } from './pool/browser-renderer.ts';
export type { LazyRenderer } from './pool/lazy-renderer.ts';
