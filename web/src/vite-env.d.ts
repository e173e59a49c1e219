/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** Origin of the API when the dashboard is hosted elsewhere; empty means the same origin. */
  readonly VITE_API_BASE?: string;
}

interface ImportMeta {
  readonly env: ImportMetaEnv;
}
