// Build-time constants (scripts/build.mjs passes them to esbuild with --define).
declare const __BROWSER__: 'chrome' | 'firefox';
