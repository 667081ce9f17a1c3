// Vite builds the dashboard into dist/ (embedded in leadflow-ingest by ../embed.cmake).
// Deliberately imports nothing, so it loads from a copy of the sources (build.sh).
export default {
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    // No inline script may run under the dashboard's Content-Security-Policy, and there is no
    // old browser to polyfill for.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
  },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
  },
};
