import { compileRule } from '../policy/compile.js';
import type { CompiledRule } from '../policy/types.js';
import type { PlanTarget } from './types.js';
import type { Grant } from './session.js';

/** Programs whose second word is a sub-command that names what runs ("npm run test"). */
const RUNNERS = new Set(['npm', 'pnpm', 'yarn', 'bun', 'npx', 'cargo', 'go', 'make', 'git', 'docker', 'kubectl', 'pip', 'uv', 'poetry', 'python', 'python3', 'node', 'deno', 'mvn', 'gradle', 'dotnet']);

/** The narrowest command prefix that still names the command: program, sub-command, script name. */
export function commandPrefix(words: { text: string; literal: boolean }[]): string[] {
  const lit: string[] = [];
  for (const w of words) {
    if (!w.literal || w.text.startsWith('-') || w.text === '*') break;
    lit.push(w.text);
  }
  if (lit.length === 0) return words.slice(0, 1).map((w) => w.text);
  const prog = lit[0]!.split('/').pop()!;
  const isRunScript = RUNNERS.has(prog) && (lit[1] === 'run' || lit[1] === 'exec' || lit[1] === 'x');
  return lit.slice(0, isRunScript ? 3 : RUNNERS.has(prog) ? 2 : Math.min(2, lit.length));
}

/** The narrowest grant that covers the call's ask-parts: exact paths, command prefixes, domains. */
export function proposeGrants(tool: string, targets: PlanTarget[]): Grant[] {
  const at = new Date().toISOString();
  if (targets.length === 0) return [{ tool, granted_at: at }];
  const out: Grant[] = [];
  const seen = new Set<string>();
  for (const t of targets) {
    const g: Grant =
      t.kind === 'path' ? { tool, path: t.path.relToRoot === '' ? '**' : escapeGlob(t.path.relToRoot), granted_at: at }
      : t.kind === 'command' ? { tool, command: commandPrefix(t.words), granted_at: at }
      : { tool, domain: t.host, granted_at: at };
    const key = JSON.stringify({ ...g, granted_at: '' });
    if (!seen.has(key)) { seen.add(key); out.push(g); }
  }
  return out;
}

function escapeGlob(p: string): string {
  return p.replace(/[*?[\]{}()!+@\\]/g, (c) => `\\${c}`);
}

export function grantToRule(g: Grant, index: number): CompiledRule {
  return compileRule({ tool: g.tool, path: g.path, command: g.command?.join(' '), domain: g.domain, decision: 'allow' }, index, 'grant');
}

export function describeGrant(g: Grant): string {
  if (g.path) return `${g.tool} on ${g.path}`;
  if (g.command) return `${g.tool}: commands starting "${g.command.join(' ')}"`;
  if (g.domain) return `${g.tool} to ${g.domain}`;
  return `${g.tool} (any arguments)`;
}

/** YAML for the policy rules that would allow this call for good (used in replays). */
export function grantsAsYaml(grants: Grant[]): string {
  return grants.map((g) => {
    const lines = [`- tool: ${g.tool}`];
    if (g.path) lines.push(`  path: ${JSON.stringify(g.path)}`);
    if (g.command) lines.push(`  command: [${JSON.stringify(g.command.join(' '))}]`);
    if (g.domain) lines.push(`  domain: ${JSON.stringify(g.domain)}`);
    lines.push('  decision: allow');
    return lines.join('\n');
  }).join('\n');
}
