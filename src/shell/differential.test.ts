import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { CREATE_PAYLOADS, REMOVE_PAYLOADS } from '../../tests/attacks/bypass-corpus.js';
import { detectBwrap } from '../exec/sandbox.js';
import { analyzeCommand, basename } from './analyze.js';
import { loadShellParser } from './parser.js';

const parser = await loadShellParser();
const bwrap = await detectBwrap();

/** Program names the analyser finds, and whether it refused something outright. */
function names(cmd: string): { names: Set<string>; refused: boolean } {
  const a = analyzeCommand(parser, cmd);
  const out = new Set<string>();
  for (const p of a.parts) {
    const w = p.words.find((x) => !/^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(x.text));
    if (w?.literal) out.add(basename(w.text));
  }
  return { names: out, refused: a.parts.some((p) => !!p.deny_reason) };
}

/**
 * bash itself as the oracle: `declare -f` prints a function body as bash parsed it, one
 * command per line. Run read-only, without network, in bubblewrap (a payload that breaks
 * out of the body can change nothing).
 */
function bashView(payload: string): string | null {
  try {
    return execFileSync(bwrap!, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--unshare-net', '--unshare-pid', '--die-with-parent', '--new-session', '--chdir', '/tmp',
      '/bin/bash', '--norc', '--noprofile', '-c', `f() {\n${payload}\n}\ndeclare -f f`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000, env: { PATH: '/usr/bin:/bin' } });
  } catch {
    return null;
  }
}

test('differential: every command bash sees in the corpus, the analyser sees too (or refuses the line)', { skip: !bwrap && 'needs bubblewrap to run bash safely' }, () => {
  // The oracle itself works: it shows bash's commands, including one the grammar would glue.
  assert.ok(names(bashView("echo $'\\\\'; touch b #'")!).names.has('touch'));
  const missed: string[] = [];
  for (const payload of [...CREATE_PAYLOADS, ...REMOVE_PAYLOADS]) {
    const ours = names(payload);
    if (ours.refused) continue;
    const view = bashView(payload);
    if (view === null) { missed.push(`${JSON.stringify(payload)}: bash rejects it but the analyser does not`); continue; }
    const body = view.replace(/^f \(\)\s*\{\s*/, '').replace(/\}\s*$/, '');
    const theirs = names(body);
    for (const n of theirs.names) if (!ours.names.has(n) && n !== 'f') missed.push(`${JSON.stringify(payload)}: bash runs ${n}`);
  }
  assert.deepEqual(missed, []);
});
