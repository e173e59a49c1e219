import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { API_BASE, apiOrigin } from '../shared/api.ts';
import { DemoWidget } from './demo-widget.tsx';
import { PricingTable } from './pricing-table.tsx';
import '../shared/styles.css';

// The page is static HTML; these are its two interactive islands.
for (const [id, node] of [
  ['demo-widget', <DemoWidget key="demo" />],
  ['pricing-table', <PricingTable key="pricing" />],
] as const) {
  const element = document.getElementById(id);
  if (element) createRoot(element).render(<StrictMode>{node}</StrictMode>);
}

for (const element of document.querySelectorAll('[data-api-origin]')) {
  element.textContent = apiOrigin();
}
// With the API elsewhere, its own pages (docs, OpenAPI) live there too.
if (API_BASE) {
  for (const link of document.querySelectorAll<HTMLAnchorElement>(
    'a[href^="/docs"], a[href^="/v1/"]',
  )) {
    link.href = `${API_BASE}${link.getAttribute('href')}`;
  }
}
