import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Grant } from '../core/session.js';
import { userStateDir } from '../user-state.js';
import { writePrivateFile } from './private-fs.js';

/** A grant the user chose to keep (allow_always): a rule in their own state, never in a workspace. */
export interface StoredGrant extends Grant {
  id: string;
  created_at: string;
}

interface GrantFile {
  version: 1;
  root: string;
  grants: StoredGrant[];
}

export interface LoadResult {
  grants: StoredGrant[];
  /** Set when the file exists but cannot be used: no grant applies (fail closed). */
  warning?: string;
}

/** The file holding the grants of one workspace root: keyed by the sha256 of its real path. */
export function grantFileFor(root: string, env: NodeJS.ProcessEnv = process.env): string {
  let real = root;
  try { real = realpathSync(root); } catch { /* a root that is gone keeps its name */ }
  const key = createHash('sha256').update(real).digest('hex');
  return path.join(userStateDir(env), 'grants', `${key}.json`);
}

function isGrant(g: unknown): g is StoredGrant {
  if (!g || typeof g !== 'object') return false;
  const o = g as Record<string, unknown>;
  const optStr = (k: string) => o[k] === undefined || typeof o[k] === 'string';
  return typeof o.id === 'string' && typeof o.tool === 'string' && o.tool.length > 0 && typeof o.created_at === 'string'
    && optStr('path') && optStr('abs') && optStr('access') && optStr('domain')
    && (o.recursive === undefined || typeof o.recursive === 'boolean')
    && (o.command === undefined || (Array.isArray(o.command) && o.command.every((w) => typeof w === 'string')));
}

/**
 * Stored grants per workspace root, read from the user's state on demand (a revoke from the CLI
 * applies to running servers at their next call). A file that cannot be parsed grants nothing.
 */
export class GrantStore {
  private cache = new Map<string, { mtimeMs: number; size: number; result: LoadResult }>();

  constructor(private readonly env: NodeJS.ProcessEnv = process.env, private readonly warn: (msg: string) => void = () => {}) {}

  fileFor(root: string): string {
    return grantFileFor(root, this.env);
  }

  load(root: string): LoadResult {
    const file = this.fileFor(root);
    let st;
    try {
      st = statSync(file);
    } catch {
      return { grants: [] };
    }
    const hit = this.cache.get(file);
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.result;
    let result: LoadResult;
    try {
      const data = JSON.parse(readFileSync(file, 'utf8')) as GrantFile;
      if (data?.version !== 1 || !Array.isArray(data.grants) || !data.grants.every(isGrant)) throw new Error('unexpected shape');
      result = { grants: data.grants };
    } catch (e) {
      result = { grants: [], warning: `the stored grants in ${file} cannot be read (${(e as Error).message}); none apply until the file is fixed or removed` };
      this.warn(result.warning!);
    }
    this.cache.set(file, { mtimeMs: st.mtimeMs, size: st.size, result });
    return result;
  }

  /** Adds grants for good; returns the stored entries. A corrupt file is not overwritten. */
  add(root: string, grants: Grant[]): StoredGrant[] {
    const cur = this.load(root);
    if (cur.warning) throw new Error(cur.warning);
    const now = new Date().toISOString();
    const added = grants.map((g) => ({ ...g, id: `g_${randomBytes(4).toString('hex')}`, created_at: now }));
    const same = (a: Grant, b: Grant) => JSON.stringify({ ...a, granted_at: '', id: '', created_at: '' }) === JSON.stringify({ ...b, granted_at: '', id: '', created_at: '' });
    const fresh = added.filter((g) => !cur.grants.some((c) => same(c, g)));
    this.write(root, [...cur.grants, ...fresh]);
    return fresh;
  }

  /** Removes one grant by id; false when no such grant. */
  revoke(root: string, id: string): boolean {
    const cur = this.load(root);
    if (cur.warning) throw new Error(cur.warning);
    const rest = cur.grants.filter((g) => g.id !== id);
    if (rest.length === cur.grants.length) return false;
    this.write(root, rest);
    return true;
  }

  private write(root: string, grants: StoredGrant[]): void {
    let real = root;
    try { real = realpathSync(root); } catch { /* keep */ }
    const body: GrantFile = { version: 1, root: real, grants };
    writePrivateFile(this.fileFor(root), JSON.stringify(body, null, 2) + '\n');
    this.cache.delete(this.fileFor(root));
  }
}
