import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { DashboardApp } from './dashboard-app.tsx';
import '../shared/styles.css';

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <DashboardApp />
    </StrictMode>,
  );
}
