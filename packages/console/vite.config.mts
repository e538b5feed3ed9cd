import { defineConfig } from 'vite';

/**
 * The console's build: one HTML page, hashed scripts and styles under assets/, no inline script
 * or style (the gateway's CSP allows neither), nothing from another origin.
 */
export default defineConfig({
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    target: 'es2022',
    assetsDir: 'assets',
    // Every asset a file of its own: an inlined data: script or font would need a wider CSP.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: true,
    rolldownOptions: {
      // The console imports only the generative UI registry of @pack/contracts; its other modules
      // (node:crypto for event ids among them) are read for the analysis and left out.
      onwarn(warning, warn) {
        if (warning.message.includes('has been externalized for browser compatibility')) return;
        warn(warning);
      },
    },
  },
  server: {
    // `pnpm --filter @pack/console dev`: the API of a platform started with `pnpm start`.
    proxy: { '/v1': process.env.PACK_GATEWAY_URL ?? 'http://127.0.0.1:8080' },
  },
});
