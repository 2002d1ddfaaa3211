// The runner the command-analysis review tests share (rounds 7, 8 and on): each attack line runs
// through the real pipeline in a fresh workspace, and the lines that ran code (made the marker file
// P), leaked the secret or broke the workspace are returned.
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Harness, type policyFromYaml } from '../../src/testing/helpers.js';

export interface Opts { git?: boolean; controls?: string[]; setup?: (dir: string) => void; broken?: (dir: string) => boolean }

export interface AttemptsFixture {
  /** The workspace: the secret under priv/ and in .env, a marker program `tp` that makes P. */
  workspace(withGit: boolean): { dir: string; cleanup: () => void };
  secret: string;
  /** Files removed before each line (what a line may leave for the next to run). */
  reset: string[];
}

export function attemptsWith(f: AttemptsFixture) {
  const leaked = (r: { data?: unknown; error?: { message: string; data?: unknown } | null }) => {
    const s = JSON.stringify(r.data ?? '') + JSON.stringify(r.error?.data ?? '') + (r.error?.message ?? '');
    return s.includes(f.secret) || s.includes(f.secret.split('').reverse().join(''));
  };
  /** Runs each line (`@DIR@` is the workspace) and returns those that ran code (made P), leaked the secret or broke `broken`. */
  return async function attempts(policy: ReturnType<typeof policyFromYaml>, lines: string[], opts: Opts = {}): Promise<string[]> {
    process.env.TOOLGATE_STARTER = 'off';
    const { dir, cleanup } = f.workspace(!!opts.git);
    opts.setup?.(dir);
    const h = new Harness([dir], { policy });
    const bad: string[] = [];
    try {
      for (const command of opts.controls ?? []) {
        const r = await h.call('run_command', { command: command.replaceAll('@DIR@', dir) });
        assert.equal(r.ok, true, `control runs: ${command}: ${JSON.stringify(r.error ?? r.data)}`);
      }
      for (const line of lines) {
        for (const name of f.reset) rmSync(path.join(dir, name), { force: true });
        const r = await h.call('run_command', { command: line.replaceAll('@DIR@', dir) });
        if (existsSync(path.join(dir, 'P')) || leaked(r) || opts.broken?.(dir)) bad.push(line);
      }
    } finally { await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; }
    return bad;
  };
}
