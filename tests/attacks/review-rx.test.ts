// Review of grep's regex worker (regex-matcher.ts): no grep argument and no file content may hold
// the server's one JavaScript thread for long. Each attack measures the longest stall of the
// event loop while the call runs (a timer that should fire every 10 ms); a stall over a second is
// a finding. Without the fixes these calls stalled the loop for seconds (numbers beside each).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness, tempDir, writeIn } from '../../src/testing/helpers.js';
import { grep, type Env } from '../../src/tools/grep/grep-fixture.js';
import { locateRg } from '../../src/tools/grep/rg.js';

const rgHere = await locateRg({ ...process.env, TOOLGATE_RG: '' });
/** 'auto' is the default configuration: ripgrep on PATH, a small folder searched in-process (small.ts). */
const ENGINES = rgHere ? (['auto', 'builtin'] as const) : (['builtin'] as const);
const STALL_MS = 1000;

/** The longest the event loop went without turning while `f` ran. */
export async function longestStall<T>(f: () => Promise<T>): Promise<{ value: T; stall: number }> {
  let last = performance.now();
  let stall = 0;
  const iv = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 10);
  try {
    const value = await f();
    return { value, stall: Math.max(stall, performance.now() - last) };
  } finally {
    clearInterval(iv);
  }
}

function setup(t: { after: (f: () => void) => void }, files: Record<string, string>) {
  const d = tempDir('tg-rx-');
  t.after(d.cleanup);
  for (const [rel, c] of Object.entries(files)) writeIn(d.dir, rel, c);
  const h = new Harness([d.dir]);
  t.after(() => h.close());
  return h;
}

async function noStall(h: Harness, engine: 'auto' | 'builtin', args: Record<string, unknown>): Promise<Env> {
  const { value, stall } = await longestStall(() => grep(h, engine, args, { TOOLGATE_GREP_TIME_CAP_MS: '2000' }));
  assert.ok(stall < STALL_MS, `${engine}: the event loop stalled ${stall.toFixed(0)} ms (${JSON.stringify(args).slice(0, 80)}…)`);
  return value;
}

test('linearInJs is misled by a POSIX class: "[[:alpha:])]" closes a class for it and then counts ")" as leaving a group, so "(a|a)(a|a)…" looks group-free — exponential on the server thread (3.5 s per pass, k=23)', { timeout: 60_000 }, async (t) => {
  const h = setup(t, { 'a.txt': `${'a'.repeat(30)}!\n` });
  const pattern = `[[:alpha:])]${'(a|a)'.repeat(23)}x`;
  for (const engine of ENGINES) {
    const r = await noStall(h, engine, { pattern });
    assert.ok(r.ok, r.text);
    assert.equal(r.data.total_files, 0);
  }
});
