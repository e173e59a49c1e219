/**
 * The page corpus (docs/corpus.md): real third-party pages that ship inside npm packages,
 * installed as exact-pinned devDependencies and served by server.ts. Every page here was
 * written by somebody else; nothing in it is ours. `version` must equal the pin in
 * package.json (the corpus test checks the installed copy against it).
 */

export interface CorpusPage {
  /** A short name for tests, logs and docs. */
  id: string;
  /** The npm package that ships the page. */
  pkg: string;
  version: string;
  /** The page's path inside the package. */
  path: string;
  /** The package's licence, as its LICENSE file and package.json state it. */
  licence: string;
  /** What the page exercises. */
  covers: string;
}

export const CORPUS = [
  {
    id: 'sb-admin-dashboard',
    pkg: 'startbootstrap-sb-admin-2',
    version: '4.1.4',
    path: 'index.html',
    licence: 'MIT',
    covers: 'Chart.js 2.9 area and doughnut charts animated with requestAnimationFrame',
  },
  {
    id: 'sb-admin-charts',
    pkg: 'startbootstrap-sb-admin-2',
    version: '4.1.4',
    path: 'charts.html',
    licence: 'MIT',
    covers: 'Chart.js 2.9 area, bar and doughnut charts, animated',
  },
  {
    id: 'cookieconsent-api',
    pkg: 'cookieconsent',
    version: '3.1.1',
    path: 'examples/example-7-javascript-api.html',
    licence: 'MIT',
    covers: 'a consent banner opened by script that fades in (1 s opacity transition)',
  },
  {
    id: 'aos-demo',
    pkg: 'aos',
    version: '2.3.4',
    path: 'demo/simple.html',
    licence: 'MIT',
    covers: 'AOS scroll-reveal: 42 boxes hidden until scrolled into view',
  },
  {
    id: 'wow-demo',
    pkg: 'wow.js',
    version: '1.2.2',
    path: 'demo.html',
    licence: 'MIT',
    covers: 'WOW.js scroll-reveal; a 980 px layout with no <meta name="viewport">',
  },
  {
    id: 'lazyload-demo',
    pkg: 'vanilla-lazyload',
    version: '10.20.1',
    path: 'demos/simple.html',
    licence: 'MIT',
    covers: '40 lazy images (data-src, IntersectionObserver); no <meta name="viewport">',
  },
  {
    id: 'agency',
    pkg: 'startbootstrap-agency',
    version: '5.2.2',
    path: 'index.html',
    licence: 'MIT',
    covers: 'a fixed header that shrinks and turns dark once the page is scrolled',
  },
  {
    id: 'reveal-demo',
    pkg: 'reveal.js',
    version: '5.2.1',
    path: 'demo.html',
    licence: 'MIT',
    covers: 'a reveal.js slide deck (transforms, scaled to the viewport)',
  },
  {
    id: 'owl-autoplay',
    pkg: 'owl.carousel',
    version: '2.3.4',
    path: 'docs/demos/autoplay.html',
    licence: 'MIT',
    covers: 'an Owl Carousel that slides on by itself every second, for ever',
  },
] as const satisfies readonly CorpusPage[];

export type CorpusId = (typeof CORPUS)[number]['id'];

export function corpusPage(id: CorpusId): CorpusPage {
  const found = CORPUS.find((p) => p.id === id);
  if (!found) throw new Error(`no corpus page ${id}`);
  return found;
}

/** The packages the fixture server serves from. */
export const CORPUS_PACKAGES: readonly string[] = [...new Set(CORPUS.map((p) => p.pkg))];
