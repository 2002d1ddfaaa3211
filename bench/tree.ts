import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Deterministic pseudo-random numbers, so every run generates the same tree. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS = ['const', 'let', 'function', 'return', 'import', 'export', 'value', 'result', 'config', 'handler', 'request', 'response', 'buffer', 'stream', 'index', 'count', 'error', 'await', 'async', 'string', 'number', 'object', 'array', 'filter', 'reduce'];
/** A kernel-like mix: mostly C sources and headers, some build files, a few docs and scripts. */
const EXTS = ['c', 'c', 'c', 'h', 'h', 'S', 'txt', 'rst', 'py', 'sh'];
/** The Linux kernel's root .gitignore begins like this: `.*` must not hide the search root. */
export const ROOT_GITIGNORE = '#\n# NOTE! Do not add files generated in subdirectories here.\n#\n.*\n*.a\n*.o\n*.ko\n*.mod\n/linux\n/vmlinux*\n!.gitignore\n!.mailmap\n';

export const NEEDLE = 'NEEDLE_7f3a9c';

export interface TreeInfo {
  root: string;
  files: number;
  needleFiles: number;
  sampleFile4k: string;
  sampleDir: string;
  smallEditFile: string;
  bigEditFile: string;
}

/**
 * A generated kernel-like tree: top-level folders × 10 sub-folders × up to 100 files (.c/.h
 * mostly), ~1–4 KB each, with a literal NEEDLE in about one file in 500, ignored *.o files
 * beside the sources, and the kernel's root .gitignore (`.*` first). Reused when already there.
 */
export function ensureTree(root: string, targetFiles = 50_000): TreeInfo {
  const subDirs = 10;
  const perDir = Math.min(100, Math.max(1, Math.ceil(targetFiles / subDirs)));
  const top = Math.ceil(targetFiles / (perDir * subDirs));
  const marker = path.join(root, '.bench-complete');
  const info: TreeInfo = {
    root, files: top * subDirs * perDir, needleFiles: 0,
    sampleFile4k: 'sample-4k.txt', sampleDir: 'pkg000/mod0', smallEditFile: 'edit-small.txt', bigEditFile: 'edit-5mb.txt',
  };
  const r = rng(42);
  let needles = 0;
  if (!existsSync(marker)) {
    mkdirSync(root, { recursive: true });
    writeFileSync(path.join(root, '.gitignore'), ROOT_GITIGNORE);
    for (let t = 0; t < top; t++) {
      for (let s = 0; s < subDirs; s++) {
        const dir = path.join(root, `pkg${String(t).padStart(3, '0')}`, `mod${s}`);
        mkdirSync(dir, { recursive: true });
        for (let f = 0; f < perDir; f++) {
          const lines: string[] = [];
          const n = 20 + Math.floor(r() * 80);
          for (let l = 0; l < n; l++) {
            const k = 3 + Math.floor(r() * 8);
            const ws: string[] = [];
            for (let w = 0; w < k; w++) ws.push(WORDS[Math.floor(r() * WORDS.length)]!);
            lines.push(ws.join(' '));
          }
          if (r() < 0.002) { lines.splice(Math.floor(lines.length / 2), 0, `// ${NEEDLE} marker`); needles++; }
          const ext = EXTS[Math.floor(r() * EXTS.length)];
          writeFileSync(path.join(dir, `file${f}.${ext}`), lines.join('\n') + '\n');
          // Build output the .gitignore hides (and the raw tools skip too).
          if (ext === 'c' && f % 10 === 0) writeFileSync(path.join(dir, `file${f}.o`), `${NEEDLE} in an object file\n`);
        }
      }
    }
    writeFileSync(path.join(root, info.sampleFile4k), 'x'.repeat(79).concat('\n').repeat(51) + 'end\n');
    writeFileSync(marker, JSON.stringify({ needles }));
  }
  info.needleFiles = JSON.parse(readFileSync(marker, 'utf8')).needles;
  return info;
}

export function resetEditFiles(root: string): void {
  const small = Array.from({ length: 40 }, (_, i) => `line ${i} alpha beta gamma`).join('\n') + '\n';
  writeFileSync(path.join(root, 'edit-small.txt'), small);
  const line = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor\n';
  const big = line.repeat(Math.ceil((5 * 1024 * 1024) / line.length));
  writeFileSync(path.join(root, 'edit-5mb.txt'), big.replace(/lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor\n$/, 'UNIQUE_TAIL_LINE\n'));
}
