// Oracles for the tests of the PATH check (src/exec/env.ts safePath): what glibc's realpath and
// bash make of a PATH entry.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { safePath } from '../exec/env.js';

/** realOrPlanned before 0c2f20f: glibc's realpath first, then the parent's and a dangling link's, lexically. */
export function glibcRealOrPlanned(p: string, hops = 0): string {
  try { return realpathSync.native(p); } catch { /* missing, dangling, a loop */ }
  const parent = path.dirname(p);
  if (parent === p || hops > 40) return p;
  const joined = path.join(glibcRealOrPlanned(parent, hops + 1), path.basename(p));
  let target: string;
  try { target = readlinkSync(joined); } catch { return joined; }
  return glibcRealOrPlanned(path.resolve(path.dirname(joined), target), hops + 1);
}

/** Plants `tgplanted` in `folder` and runs it by its bare name with PATH=entry from `cwd`, as a command would. */
export function bashRunsPlanted(entry: string, folder: string, cwd = '/'): boolean {
  mkdirSync(folder, { recursive: true });
  writeFileSync(`${folder}/tgplanted`, '#!/bin/sh\necho PLANTED\n');
  chmodSync(`${folder}/tgplanted`, 0o755);
  const r = spawnSync('/bin/bash', ['--norc', '--noprofile', '-c', 'tgplanted'], { env: { PATH: entry }, cwd, encoding: 'utf8' });
  rmSync(`${folder}/tgplanted`);
  return r.stdout === 'PLANTED\n';
}

/** Whether safePath keeps `entry` (beside /usr/bin) for a workspace of `ws`. */
export const keepsEntry = (entry: string, ws: string) => safePath(`${entry}:/usr/bin`, [ws]).split(':').includes(entry);
