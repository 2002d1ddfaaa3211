// Builds dist/cli.js as one ESM bundle: start-up reads one file instead of hundreds of
// modules (measured: `toolgate --version` 0.37 s unbundled vs 0.15 s bundled on this machine).
// Type checking is tsc's job (npm run typecheck); this only transpiles and bundles.
import { build } from 'esbuild';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

/** Tools read their model-facing description from description.md beside them; inline it. */
const inlineDescriptions = {
  name: 'inline-descriptions',
  setup(b) {
    b.onLoad({ filter: /src[\\/]tools[\\/].*\.ts$/ }, async (args) => {
      let src = await readFile(args.path, 'utf8');
      const re = /descriptionBeside\(import\.meta\.url(?:,\s*'([^']+)')?\)/g;
      const found = [...src.matchAll(re)];
      for (const m of found) {
        const md = await readFile(path.join(path.dirname(args.path), m[1] ?? 'description.md'), 'utf8');
        src = src.replace(m[0], JSON.stringify(md.trim()));
      }
      return { contents: src, loader: 'ts' };
    });
  },
};

/**
 * Start-up parses the whole bundle: two dependencies' data tables that toolgate never needs are
 * replaced by small stand-ins in scripts/stubs (see each file for why it is safe; tests/build
 * holds them to the originals). Measured: ~790 KB less to parse, ~15 ms off start-up.
 */
const STUBS = {
  'iconv-lite': path.resolve('scripts/stubs/iconv-lite.mjs'),
  'zod-locales': path.resolve('scripts/stubs/zod-locales.mjs'),
};
const stubs = {
  name: 'stubs',
  setup(b) {
    b.onResolve({ filter: /^iconv-lite$/ }, () => ({ path: STUBS['iconv-lite'] }));
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer) ? { path: STUBS['zod-locales'] } : undefined);
  },
};

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.17',
  // web-tree-sitter locates its .wasm beside its own module file: keep it in node_modules.
  external: ['web-tree-sitter', 'tree-sitter-bash'],
  banner: { js: "import { createRequire as __tgCreateRequire } from 'node:module'; const require = __tgCreateRequire(import.meta.url);" },
  plugins: [inlineDescriptions, stubs],
  logLevel: 'warning',
  legalComments: 'none',
};

/**
 * First pass: the built-in tools' JSON Schemas, derived from their zod schemas by the same code
 * the server runs (src/tools/schemas-for-build.ts), so the bundle carries them prebuilt
 * (src/core/tool-schemas.ts; ~15-20 ms of start-up). tests/build checks tools/list against zod.
 */
async function toolSchemas() {
  await mkdir('dist', { recursive: true });
  const tmp = path.resolve(`dist/.schemas.${process.pid}.mjs`);
  await build({ ...common, entryPoints: ['src/tools/schemas-for-build.ts'], outfile: tmp });
  try {
    const mod = await import(pathToFileURL(tmp).href);
    return mod.builtInToolSchemas();
  } finally {
    await rm(tmp, { force: true });
  }
}

const result = await build({
  ...common,
  define: { __TOOLGATE_TOOL_SCHEMAS__: JSON.stringify(await toolSchemas()) },
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/cli.js',
  sourcemap: 'linked',
  // Less to parse at start-up; identifiers are kept, so stack traces stay readable.
  // (Code splitting was measured too: slower to start here, 0.21 s vs 0.12 s CPU.)
  minifyWhitespace: true,
  minifySyntax: true,
  write: false,
});
// The built-in grep engine's regex worker (src/tools/grep/regex-matcher.ts starts it from beside cli.js).
const worker = await build({
  ...common,
  entryPoints: ['src/tools/grep/regex-worker.ts'],
  outfile: 'dist/regex-worker.js',
  minifyWhitespace: true,
  minifySyntax: true,
  write: false,
});
// Written to a temp file and renamed: a test or a client starting dist/cli.js while a build
// runs sees the old bundle or the new one, never a missing or half-written file.
await mkdir('dist', { recursive: true });
for (const f of [...result.outputFiles, ...worker.outputFiles]) {
  const tmp = `${f.path}.${process.pid}.tmp`;
  await writeFile(tmp, f.contents, { mode: f.path.endsWith('.js') ? 0o755 : 0o644 });
  await rename(tmp, f.path);
}
