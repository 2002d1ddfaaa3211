import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { locateRg } from '../tools/grep/rg.js';
import type { PathRules } from '../workspace/path-rules.js';

/** More secret mounts than this and the command is refused rather than half-masked. */
export const MAX_SECRET_MOUNTS = 4000;
const WALK_CAP = 300_000;

export interface SecretScan {
  /** Absolute paths to mask: the top-most denied directory, or the file itself. */
  paths: string[];
  /** True when the scan could not see the whole tree (walk cap): the caller refuses. */
  incomplete: boolean;
}

/** Lists every file below `root` whose name the deny patterns could match (ripgrep, all hidden and ignored files included). */
function rgCandidates(rg: string, root: string, patterns: string[]): Promise<string[] | null> {
  const globs = patterns.flatMap((p) => ['-g', p, '-g', p.endsWith('/**') ? p : `${p}/**`]);
  return new Promise((resolve) => {
    execFile(rg, ['--files', '--hidden', '--no-ignore', '--no-config', '--no-messages', '-0', ...globs], { cwd: root, maxBuffer: 64 << 20, encoding: 'buffer' }, (err, stdout) => {
      // rg exits 1 when nothing matched; anything else without output is a failure.
      if (err && (err as { code?: number }).code !== 1) return resolve(null);
      resolve(stdout.toString('utf8').split('\0').filter(Boolean));
    });
  });
}

async function walkAll(root: string): Promise<{ files: string[]; incomplete: boolean }> {
  const files: string[] = [];
  const stack = [''];
  let seen = 0;
  while (stack.length) {
    const rel = stack.pop()!;
    let entries;
    try { entries = await readdir(path.join(root, rel), { withFileTypes: true }); } catch { continue; }
    for (const e of entries) {
      if (++seen > WALK_CAP) return { files, incomplete: true };
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) stack.push(r);
      else files.push(r);
    }
  }
  return { files, incomplete: false };
}

/**
 * Finds the secrets (paths.deny) inside the workspace so the sandbox can mask them: a
 * command allowed to read (`grep -r`, `cat sub/.e*`) must not see a nested `.env` either.
 */
export async function scanSecrets(roots: string[], rules: PathRules): Promise<SecretScan> {
  const rg = await locateRg(process.env, roots);
  const out = new Set<string>();
  let incomplete = false;
  for (const root of roots) {
    let rels = rg ? await rgCandidates(rg, root, rules.deny) : null;
    if (!rels) {
      const w = await walkAll(root);
      rels = w.files;
      incomplete ||= w.incomplete;
    }
    for (const rel of rels) {
      if (!rules.isDenied(rel, path.join(root, rel))) continue;
      // Mask the top-most denied ancestor (a whole `.ssh/`), not each file in it.
      const parts = rel.split('/');
      let top = rel;
      for (let i = 1; i < parts.length; i++) {
        const anc = parts.slice(0, i).join('/');
        if (rules.isDenied(anc, path.join(root, anc))) { top = anc; break; }
      }
      out.add(path.join(root, top));
    }
  }
  return { paths: [...out].sort(), incomplete };
}
