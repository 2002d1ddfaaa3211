// package.json's dependencies are exactly what src/ imports, and the README's table lists
// exactly those, each with a reason.
import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../../src/testing/helpers.js';

const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
const deps = Object.keys(pkg.dependencies).sort();

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Package names a source file imports: static and dynamic imports, require and require.resolve. */
export function importedPackages(source: string): string[] {
  const out = new Set<string>();
  const forms = [
    /^\s*(?:import|export)\s[^'"]*?\bfrom\s*['"]([^'"]+)['"]/gm, // import … from 'x' (also multi-line), export … from 'x'
    /^\s*import\s*['"]([^'"]+)['"]/gm, // import 'x' (side effects)
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, // await import('x')
    /\brequire(?:\.resolve)?\s*\(\s*['"]([^'"]+)['"]/g, // require('x'), require.resolve('x/file')
  ];
  for (const re of forms) {
    for (const m of source.matchAll(re)) {
      const spec = m[1]!;
      if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]!)) continue;
      const parts = spec.split('/');
      out.add(spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!);
    }
  }
  return [...out];
}

const sources = files(path.join(REPO_ROOT, 'src'));
const isTest = (f: string) => f.endsWith('.test.ts') || f.includes(`${path.sep}testing${path.sep}`);
const byPackage = new Map<string, string[]>();
for (const f of sources.filter((x) => !isTest(x))) {
  for (const p of importedPackages(readFileSync(f, 'utf8'))) byPackage.set(p, [...(byPackage.get(p) ?? []), path.relative(REPO_ROOT, f)]);
}

test('importedPackages reads every import form (control)', () => {
  const src = [
    "import { z } from 'zod';", "import type {\n  X,\n} from '@scope/pkg/sub.js';", "const s = `from 'not-an-import'`;", "const m = await import('web-tree-sitter');",
    "require.resolve('tree-sitter-bash/tree-sitter-bash.wasm');", "import fs from 'node:fs';", "import path from 'path';",
    "import { a } from './local.js';", "import 'side-effect';", "export { y } from 'reexported';",
  ].join('\n');
  assert.deepEqual(importedPackages(src).sort(), ['@scope/pkg', 'reexported', 'side-effect', 'tree-sitter-bash', 'web-tree-sitter', 'zod']);
});

test('every dependency is imported somewhere in src/ (outside tests)', () => {
  const unused = deps.filter((d) => !byPackage.has(d));
  assert.deepEqual(unused, [], `dependencies nothing in src/ imports: ${unused.join(', ')} — remove them (npm uninstall)`);
});

test('src/ (outside tests) imports only its dependencies', () => {
  const missing = [...byPackage.keys()].filter((p) => !deps.includes(p)).map((p) => `${p} (in ${byPackage.get(p)!.join(', ')})`);
  assert.deepEqual(missing, [], 'imported but not in dependencies');
});

test('tests in src/ import only dependencies and devDependencies', () => {
  const known = new Set([...deps, ...Object.keys(pkg.devDependencies)]);
  const bad = sources.filter(isTest).flatMap((f) => importedPackages(readFileSync(f, 'utf8')).filter((p) => !known.has(p)).map((p) => `${p} (${path.relative(REPO_ROOT, f)})`));
  assert.deepEqual(bad, []);
});

test("the README's dependency table lists exactly the dependencies, each with a reason", () => {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const section = /\n## Dependencies[^\n]*\n([\s\S]*?)(?=\n## )/.exec(readme);
  assert.ok(section, 'README has a "## Dependencies" section');
  const listed: string[] = [];
  for (const row of section[1]!.split('\n').filter((l) => l.startsWith('|') && !/^\|\s*-/.test(l))) {
    const [first, why] = row.split('|').slice(1).map((c) => c.trim());
    if (!first || first === 'package' || first.startsWith('dev:')) continue;
    assert.ok(why && why.length > 10, `a reason for ${first}`);
    for (const m of first.matchAll(/`([^`]+)`/g)) listed.push(m[1]!.replace(/ \(v\d+\)$/, ''));
  }
  assert.deepEqual(listed.sort(), deps);
});
