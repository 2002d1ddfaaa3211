// A workspace with denied folders at depth 1 and 3, links into them, and names that must
// never come back: the fixture of the gate-oracle attack tables.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Envelope } from '../../src/core/envelope.js';

/** Text inside every denied file: never in a reply, a spill or an audit line. */
export const SECRET_TEXT = 'TOPSECRET-7f3a';
/** Names inside the denied folders that no probe names: they must never appear anywhere. */
export const HIDDEN_NAMES = ['hidden-ledger-91.txt', 'hidden-sub-42', 'deep-hidden-77.md'];

export const DENIED_DIRS = ['priv', 'd1/d2/d3'] as const;

export interface GateTree {
  ws: string;
  state: string;
  cleanup(): void;
}

export const GATE_POLICY = `
rules:
  - { tool: "*", path: "priv/**", decision: deny }
  - { tool: "*", path: "d1/d2/d3/**", decision: deny }
  - { tool: "*", path: "asked/**", decision: ask }
  - { tool: "*", path: "pub/**", decision: allow }
`;

function mkfifo(p: string): void {
  try { execFileSync('mkfifo', [p]); } catch { writeFileSync(p, 'x'); }
}

export function gateTree(): GateTree {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'tg-gate-')));
  const ws = path.join(base, 'ws');
  const state = path.join(base, 'state');
  mkdirSync(ws);
  mkdirSync(state);
  const w = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    writeFileSync(path.join(ws, rel), text);
  };
  for (const d of DENIED_DIRS) {
    w(`${d}/x`, `a ${SECRET_TEXT} line\n`);
    w(`${d}/hidden-ledger-91.txt`, `${SECRET_TEXT} ledger\n`);
    w(`${d}/hidden-sub-42/deep-hidden-77.md`, `${SECRET_TEXT} deep\n`);
    mkdirSync(path.join(ws, d, 'sub'));
    w(`${d}/sub/y`, `${SECRET_TEXT} y\n`);
    mkfifo(path.join(ws, d, 'fifo'));
    symlinkSync('x', path.join(ws, d, 'selflink'));
    symlinkSync('loop2', path.join(ws, d, 'loop1'));
    symlinkSync('loop1', path.join(ws, d, 'loop2'));
  }
  w('pub/a.txt', 'a public line\n');
  w('pub/nested/b.txt', 'another public line\n');
  w('asked/q.txt', `asked content ${SECRET_TEXT}\n`);
  mkdirSync(path.join(ws, 'asked', 'sub'));
  mkfifo(path.join(ws, 'asked', 'fifo'));
  symlinkSync('../../outside-target', path.join(ws, 'asked', 'out'));
  symlinkSync('missing', path.join(ws, 'asked', 'dangling'));
  w('d1/d2/open.txt', 'open text\n');
  symlinkSync('../priv', path.join(ws, 'pub', 'in'));
  symlinkSync('../priv/x', path.join(ws, 'pub', 'inx'));
  symlinkSync('../priv/missing', path.join(ws, 'pub', 'dang'));
  symlinkSync('../priv/nodir/missing', path.join(ws, 'pub', 'dangdeep'));
  symlinkSync('../priv/loop1', path.join(ws, 'pub', 'inloop'));
  symlinkSync('../d1/d2/d3/x', path.join(ws, 'pub', 'in3'));
  symlinkSync('../d1/d2/d3/missing', path.join(ws, 'pub', 'dang3'));
  return { ws, state, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}

/** Probes of one denied folder D: each must get the same answer as every other. */
export function probes(d: string, ws?: string): Array<[string, string]> {
  const viaLinks: Array<[string, string]> = d === 'priv'
    ? [['link to a file in', 'pub/inx'], ['through a folder link', 'pub/in/x'], ['through a folder link, missing', 'pub/in/missing'],
      ['dangling link into', 'pub/dang'], ['dangling link, missing parent', 'pub/dangdeep'], ['link to a loop in', 'pub/inloop'],
      ['the folder via link', 'pub/in']]
    : [['link to a file in', 'pub/in3'], ['dangling link into', 'pub/dang3']];
  return [
    ['existing file', `${d}/x`], ['missing file', `${d}/missing`], ['folder', `${d}/sub`], ['missing parent', `${d}/nodir/missing`],
    ['the folder itself', d], ['fifo', `${d}/fifo`], ['symlink inside', `${d}/selflink`], ['link loop inside', `${d}/loop1`],
    ['dot-dot inside', `${d}/sub/../x`], ['trailing slash', `${d}/sub/`], ['missing with slash', `${d}/nope/`],
    ['dot prefix', `./${d}/x`], ['through a sibling and back', `pub/../${d}/x`], ['double slash', `${d}//x`],
    ['through a missing folder and back', `pub/nothing/../../${d}/missing`],
    ...(ws ? [['absolute, existing', `${ws}/${d}/x`], ['absolute, missing', `${ws}/${d}/missing`]] as Array<[string, string]> : []),
    ...viaLinks,
  ];
}

export const RULE_TEXT = /\{tool: [^}]*\}/g;

/** The reply with the caller's own path and the rule's text taken out: what is left must be the same for every probe. */
export function normalise(env: Envelope, input: string): string {
  const err = env.error ? { code: env.error.code, message: env.error.message, details: env.error.details ?? null } : { ok: env.ok, data: env.data };
  return JSON.stringify(err).replace(RULE_TEXT, '<RULE>').split(input).join('<P>');
}


/** Denied content or a name inside a denied folder (other than what the caller gave) in anything the reply holds. */
export function deniedLeaks(env: unknown, given: string[] = []): string[] {
  let s = JSON.stringify(env).replace(RULE_TEXT, '<RULE>');
  for (const g of given) s = s.split(g).join('<G>');
  const out: string[] = [];
  if (s.includes(SECRET_TEXT)) out.push('secret text');
  for (const n of HIDDEN_NAMES) if (s.includes(n)) out.push(`name ${n}`);
  if (/priv\/|d3\//.test(s)) out.push('a path inside a denied folder');
  return out;
}

/** The codes a refusal by a rule or by the secrets list may carry. */
export const REFUSED = new Set(['ToolNotAllowed', 'PathDenied']);
