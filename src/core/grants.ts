import picomatch from 'picomatch';
import { compileRule } from '../policy/compile.js';
import { CASE_INSENSITIVE_FS } from '../workspace/path-rules.js';
import type { CompiledRule } from '../policy/types.js';
import type { PlanTarget } from './types.js';
import type { Grant } from './session.js';

/** Package managers whose `run`/`exec` sub-command names a project script: the grant stops at the script's name. */
const SCRIPT_RUNNERS = new Set(['npm', 'pnpm', 'yarn', 'bun']);
const SCRIPT_VERBS = new Set(['run', 'run-script']);
const ASSIGN = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;

/**
 * The narrowest command prefix that covers the call (SPEC §8): the whole literal command, so
 * approving `node --version` or `git --version` grants exactly that, never every `node` or
 * `git` call. One exception keeps grants useful: `npm run test -- --watch` grants
 * `npm run test` (the project's own script; what follows is passed to it). A word known only
 * when the command runs (`$X`, a glob) stays in the grant as written: no call can match it
 * literally, so such a grant covers nothing beyond this one call.
 */
export function commandPrefix(words: { text: string; literal: boolean }[]): string[] {
  const texts = words.map((w) => w.text);
  let a = 0;
  // Leading assignments (FOO=1 npm …) stay in the grant: they change what the command does.
  while (a < words.length - 1 && words[a]!.literal && ASSIGN.test(texts[a]!)) a++;
  const prog = texts[a]?.split('/').pop() ?? '';
  const script = texts[a + 2];
  if (SCRIPT_RUNNERS.has(prog) && SCRIPT_VERBS.has(texts[a + 1] ?? '') && script !== undefined && !script.startsWith('-')
    && words.slice(0, a + 3).every((w) => w.literal)) {
    return texts.slice(0, a + 3);
  }
  return texts;
}

/**
 * The narrowest grant that covers the call's ask-parts: exact paths, command prefixes, domains.
 * Paths inside a directory the same call also targets (a recursive delete) are covered by
 * one `<dir>/**` grant instead of one grant per entry.
 */
export function proposeGrants(tool: string, targets: PlanTarget[]): Grant[] {
  const at = new Date().toISOString();
  if (targets.length === 0) return [{ tool, granted_at: at }];
  const dirs = new Set(targets.flatMap((t) => (t.kind === 'path' && t.path.kind === 'dir' ? [t.path.relToRoot] : [])));
  const under = (rel: string) => {
    for (let i = rel.lastIndexOf('/'); i > 0; i = rel.lastIndexOf('/', i - 1)) if (dirs.has(rel.slice(0, i))) return true;
    return dirs.has('') && rel !== '';
  };
  const hasChildren = (dir: string) => targets.some((t) => t.kind === 'path' && t.path.relToRoot !== dir && (dir === '' || t.path.relToRoot.startsWith(`${dir}/`)));
  const out: Grant[] = [];
  const seen = new Set<string>();
  const add = (g: Grant) => {
    const key = JSON.stringify({ ...g, granted_at: '' });
    if (!seen.has(key)) { seen.add(key); out.push(g); }
  };
  for (const t of targets) {
    if (t.kind === 'path') {
      const rel = t.path.relToRoot;
      if (under(rel)) continue;
      const base = { tool, abs: t.path.abs, access: accessKind(t.access), granted_at: at };
      add({ ...base, path: rel === '' ? '**' : escapeGlob(rel), recursive: rel === '' ? true : undefined });
      if (t.path.kind === 'dir' && rel !== '' && hasChildren(rel)) add({ ...base, path: `${escapeGlob(rel)}/**`, recursive: true });
    } else if (t.kind === 'command') {
      // A hard ask (a write or link to a path known only when it runs, without a sandbox) is asked
      // every time: a grant by prefix would let any later path through.
      if (!t.ask_reason) add({ tool, command: commandPrefix(t.words), granted_at: at });
    }
    else add({ tool, domain: t.host, granted_at: at });
  }
  return out;
}

/** Creating a file and changing it are one kind of grant (a file created once is then changed); deleting is another. */
function accessKind(a: string): string {
  return a === 'create' ? 'write' : a;
}

function escapeGlob(p: string): string {
  return p.replace(/[*?[\]{}()!+@\\"']/g, (c) => `\\${c}`);
}

/**
 * A grant as a rule. Its path glob is anchored at the root: a grant for `a.txt` covers
 * `a.txt`, not `sub/a.txt` (policy path globs without a slash match at any depth).
 */
export function grantToRule(g: Grant, index: number): CompiledRule {
  const rule = compileRule({ tool: g.tool, path: g.path, command: g.command?.join(' '), domain: g.domain, decision: 'allow' }, index, 'grant');
  if (g.path !== undefined) rule.path = g.path === '**' ? () => true : picomatch(g.path, { dot: true, nocase: CASE_INSENSITIVE_FS });
  if (g.command !== undefined) {
    // Literal too: a word of the call that is "*" or holds a space ('* *') is one exact word
    // here, never a wildcard — the grant covers only commands starting with the words approved.
    const cmd = g.command;
    rule.commandTarget = (words) => cmd.length > 0 && words.length >= cmd.length && cmd.every((w, i) => words[i]!.literal && words[i]!.text === w);
  }
  if (g.abs !== undefined) {
    const abs = g.abs;
    // Literal: no glob, no quoting rules, and the root is part of the path (several roots).
    rule.pathTarget = (t) => (g.access === undefined || accessKind(t.access) === g.access)
      && (t.path.abs === abs || (g.recursive === true && t.path.abs.startsWith(abs.endsWith('/') ? abs : `${abs}/`)));
  }
  return rule;
}

export function describeGrant(g: Grant): string {
  if (g.abs) return `${g.tool} (${g.access ?? 'any access'}) on ${JSON.stringify(g.abs)}${g.recursive ? ' and everything under it' : ''}`;
  if (g.path) return `${g.tool} on ${JSON.stringify(g.path)}`;
  if (g.command) return `${g.tool}: commands starting "${g.command.join(' ')}"`;
  if (g.domain) return `${g.tool} to ${g.domain}`;
  return `${g.tool} (any arguments)`;
}

/** YAML for the policy rules that would allow this call for good (used in replays). */
export function grantsAsYaml(grants: Grant[]): string {
  return grants.map((g) => {
    const lines = [`- tool: ${g.tool}`];
    // A pattern without a slash would match that name at any depth (gitignore); a leading
    // slash anchors it to the root, so the rule allows exactly what was asked about.
    if (g.path) lines.push(`  path: ${JSON.stringify(g.path.includes('/') || g.path === '**' ? g.path : `/${g.path}`)}`);
    if (g.command) lines.push(`  command: [${JSON.stringify(g.command.join(' '))}]`);
    if (g.domain) lines.push(`  domain: ${JSON.stringify(g.domain)}`);
    lines.push('  decision: allow');
    return lines.join('\n');
  }).join('\n');
}
