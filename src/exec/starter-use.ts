import { Helper } from './starter.js';

/**
 * The one starter process of this server (starter.ts): started on demand, replaced when it dies
 * or is wedged (runs it had in flight end with an error), given up after MAX_HELPER_FAILURES.
 * Why it exists: on Linux libuv starts a child with fork(), which copies the server's page
 * tables on its only JavaScript thread — measured, spawn() itself blocked 0.9 ms in a 50 MB
 * Node process and 3.9 ms in a 110–140 MB server. rg (src/tools/grep/rg-spawn.ts) and commands
 * (run.ts) are started by the small helper instead (rg once it runs or the server is big enough).
 * TOOLGATE_STARTER=off turns it off; =always uses it at any size (tests). Only on Linux.
 */

let helper: Helper | null = null;
let helperFailures = 0;
/** After this many helpers died, everything is started directly for the rest of the process's life. */
const MAX_HELPER_FAILURES = 3;

/**
 * Below this resident set the server starts rg itself: a fork from it costs about what the
 * round trip through the starter does (measured: grep on a 10-file folder 5.3 ms direct, 5.6
 * through the starter at 77 MB; at 180 MB the starter saves 1.3–1.9 ms and all of the fork's
 * 1.3 ms of the server's CPU). Commands go through the starter at any size (run.ts, viaStarter).
 */
export const HELPER_MIN_RSS = 96 * 1024 * 1024;

export function starterSetting(): 'off' | 'always' | 'auto' {
  if (process.platform !== 'linux') return 'off';
  const s = process.env.TOOLGATE_STARTER?.trim() ?? '';
  if (/^(off|0|false|no|none)$/i.test(s)) return 'off';
  return /^always$/i.test(s) ? 'always' : 'auto';
}

/**
 * Whether this server is one the starter pays off in: it is running or starting already (it is then
 * used whatever the size and rate), or the server holds HELPER_MIN_RSS. The launched check comes
 * first: reading the resident set costs ~0.1 ms.
 */
export function bigEnoughForStarter(): boolean {
  return starterLaunched() || process.memoryUsage.rss() >= HELPER_MIN_RSS;
}

/** True while a starter is running or starting. */
export function starterLaunched(): boolean {
  return helper !== null && !helper.dead;
}

/** The running, ready helper; starts one when there is none (and answers null until it is ready). */
export function readyHelper(): Helper | null {
  if (starterSetting() === 'off' || helperFailures >= MAX_HELPER_FAILURES) return null;
  if (helper && !helper.dead) return helper.ready ? helper : null;
  try {
    const h: Helper = new Helper((unexpected) => {
      if (unexpected) helperFailures++;
      if (helper === h) helper = null;
    });
    helper = h;
  } catch {
    helperFailures++;
  }
  return null;
}

/** For tests: the helper's pid once it is ready (starting it if needed), or null when it is not used. */
export async function helperPidForTests(timeoutMs = 10_000): Promise<number | null> {
  if (starterSetting() === 'off') return null;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const h = readyHelper();
    if (h) return h.proc.pid ?? null;
    if (Date.now() > until || helperFailures >= MAX_HELPER_FAILURES) return null;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The starter's pid while one runs (it carries the mark of commands: mark.ts), else null. */
export function starterPid(): number | null {
  return helper && !helper.dead ? helper.proc.pid ?? null : null;
}

/** Stops the helper (tests; a server's exit ends it by closing the channel). */
export function stopStarter(): void {
  helper?.stop();
  helper = null;
}

/** Tests: stops the helper and forgets how many died, as in a fresh process. */
export function resetStarterForTests(): void {
  stopStarter();
  helperFailures = 0;
}
