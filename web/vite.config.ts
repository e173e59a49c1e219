import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { writeBuildStamp } from '../scripts/ensure-web-build.ts';

const root = import.meta.dirname;

/**
 * Brotli and gzip siblings of the text assets: the app serves them (@fastify/static
 * `preCompressed`) to clients that accept them, without compressing on every request.
 */
function precompress(): Plugin {
  let assetsDir = '';
  return {
    name: 'shotsmith-precompress',
    apply: 'build',
    configResolved(config) {
      assetsDir = path.resolve(config.root, config.build.outDir, config.build.assetsDir);
    },
    async closeBundle() {
      for (const name of await readdir(assetsDir)) {
        if (!/\.(js|css|svg)$/.test(name)) continue;
        const body = await readFile(path.join(assetsDir, name));
        if (body.length < 1024) continue;
        const br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } });
        await writeFile(path.join(assetsDir, `${name}.br`), br);
        await writeFile(path.join(assetsDir, `${name}.gz`), gzipSync(body, { level: 9 }));
      }
    },
  };
}

/** What the build was made from, so `npm start` knows whether it is current. */
function buildStamp(): Plugin {
  let outDir = '';
  return {
    name: 'shotsmith-build-stamp',
    apply: 'build',
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    async closeBundle() {
      await writeBuildStamp(outDir, process.env.VITE_API_BASE ?? '');
    },
  };
}

/**
 * Two pages: the landing page (/) and the dashboard (/dashboard/*, routed on the client).
 * VITE_API_BASE (build time) points a dashboard hosted elsewhere at the API; empty means the
 * same origin. The output, web/dist, is served by the app (src/http/web.ts).
 */
// biome-ignore lint/style/noDefaultExport: Vite loads the config's default export.
export default defineConfig({
  root,
  base: '/',
  publicDir: false,
  plugins: [react(), precompress(), buildStamp()],
  build: {
    outDir: path.join(root, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // Every browser that runs this bundle supports modulepreload.
    modulePreload: { polyfill: false },
    rolldownOptions: {
      input: {
        index: path.join(root, 'index.html'),
        dashboard: path.join(root, 'dashboard.html'),
      },
      // React and web/src/shared, used by both pages, in chunks of their own.
      output: {
        codeSplitting: {
          groups: [
            { name: 'react', test: /node_modules/ },
            { name: 'shared', test: /web\/src\/shared/ },
          ],
        },
      },
    },
  },
});
