import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { GrantStore, type StoredGrant } from '../approvals/grant-store.js';
import { describeGrant } from '../core/grants.js';
import { userStateDir } from '../user-state.js';
import { Workspace } from '../workspace/workspace.js';
import { UsageError, type CommonFlags } from './setup.js';

/** The roots with stored grants: those of --workspace, or every root that has a grants file. */
async function rootsOf(flags: CommonFlags): Promise<string[]> {
  if (flags.workspace?.length) return Workspace.realRoots(flags.workspace);
  const dir = path.join(userStateDir(), 'grants');
  const out: string[] = [];
  let names: string[] = [];
  try { names = readdirSync(dir); } catch { return []; }
  for (const n of names.filter((x) => x.endsWith('.json'))) {
    try {
      const root = (JSON.parse(readFileSync(path.join(dir, n), 'utf8')) as { root?: unknown }).root;
      if (typeof root === 'string') out.push(root);
    } catch { /* shown as a warning by list when its root is named */ }
  }
  return out;
}

export async function grantsCommand(sub: string | undefined, rest: string[], flags: CommonFlags & { json?: boolean }): Promise<number> {
  const warnings: string[] = [];
  const store = new GrantStore(process.env, (m) => warnings.push(m));
  const roots = await rootsOf(flags);
  if (sub === 'list' || sub === undefined) {
    const all: Array<StoredGrant & { root: string }> = [];
    for (const root of roots) for (const g of store.load(root).grants) all.push({ ...g, root });
    for (const w of warnings) process.stderr.write(`toolgate: ${w}\n`);
    if (flags.json) {
      process.stdout.write(JSON.stringify(all, null, 2) + '\n');
      return warnings.length ? 1 : 0;
    }
    if (all.length === 0) process.stdout.write('No stored grants.\n');
    for (const g of all) process.stdout.write(`${g.id}  ${describeGrant(g)}\n    workspace ${g.root}, since ${g.created_at}\n`);
    if (all.length) process.stdout.write('Remove one with: toolgate grants revoke ID\n');
    return warnings.length ? 1 : 0;
  }
  if (sub === 'revoke') {
    const id = rest[0];
    if (!id) throw new UsageError('usage: toolgate grants revoke ID');
    for (const root of roots) {
      if (store.revoke(root, id)) {
        process.stdout.write(`revoked ${id} (workspace ${root})\n`);
        return 0;
      }
    }
    process.stderr.write(`toolgate: no stored grant ${JSON.stringify(id)}${flags.workspace?.length ? ` for ${flags.workspace.join(', ')}` : ''}; see toolgate grants list\n`);
    return 1;
  }
  throw new UsageError('usage: toolgate grants list [--json] | toolgate grants revoke ID');
}
