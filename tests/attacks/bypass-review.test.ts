/**
 * Independent review corpus: payloads tried against run_command under a ci-mode policy that
 * allows only a few harmless commands. Every payload here is (correctly) refused and leaves
 * the workspace untouched. Payloads that got through at review time are in the review report,
 * not here (a committed test must pass).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

const POLICY = `
mode: ci
sandbox: { backend: none }
rules:
  - tool: run_command
    command: ["echo", "ls", "cat", "git status", "git log", "grep", "pwd"]
    decision: allow
`;

const REFUSED = new Set(['ToolNotAllowed', 'ApprovalRequired']);

const PAYLOADS = [
  // heredocs: delimiters bash and the grammar agree on, and commands around them
  'cat <<< x > canary',
  'cat <<EOF && touch canary\nEOF',
  'cat <<EOF ; touch canary\nEOF',
  'cat <<EOF | sh\ntouch canary\nEOF',
  'cat <<EOF | cat > canary\nhi\nEOF',
  'cat <<EOF <> canary\nEOF',
  'cat <<EOF 1<>canary\nEOF',
  'cat <<A <<B >canary\nA\nB',
  'echo ok; cat <<EOF >canary | echo\nEOF',
  'cat <<"E"OF\nEOF\ntouch canary\n"E"OF',
  'cat <<E\\OF\nEOF\ntouch canary\nE\\OF',
  "cat <<'E'OF\nEOF\ntouch canary\n'E'OF",
  'cat <<-EOF\n\tEOF\ntouch canary\nEOF',
  'cat <<EOF\nEOF \ntouch canary\nEOF',
  'cat <<EOF\nhi\nEOF\ntouch canary',
  'cat << EOF\nEOF\ntouch canary',
  'echo $(cat <<EOF\nhi\nEOF)\ntouch canary',
  'cat <<EOF\n$(touch canary)\nEOF',
  "cat <<\"E\"'F'\nEF\ntouch canary\n\"E\"'F'",
  'cat <<E\\ F\nE F\ntouch canary\nE\\ F',
  "cat <<'E F'\nE F\ntouch canary\n'E F'",
  'cat <<\\E\nE\ntouch canary\n\\E',
  // comments and continuations
  'ls #\\\ntouch canary',
  'ls # \\\ntouch canary',
  'echo hi > canary\\\n',
  // redirect forms
  'echo x >&canary',
  'x=1 >canary',
  '>canary x=1',
  'echo ok >/proc/self/cwd/canary',
  'exec {fd}>canary',
  'echo ok {fd}>canary',
  'echo ok > .git/config',
  'echo ok >> .git/hooks/pre-commit',
  'echo ok > victim',
  // options of allowed programs that write or run
  'git log --output=canary',
  'git log --output canary',
  'git status --porcelain=v2 --output=canary',
  'git -c core.fsmonitor="touch canary" status',
  'git -c core.pager="touch canary" log',
  'git --exec-path=. status',
  // environment prefixes and wrappers
  'GIT_PAGER="touch canary" git log',
  'LD_PRELOAD=./x.so ls',
  'BASH_ENV=./x.sh ls',
  'PROMPT_COMMAND="touch canary" ls',
  'GIT_DIR=sub git status',
  'env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0="touch canary" git status',
  'command -p touch canary',
  'exec -a ls touch canary',
  'builtin eval "touch canary"',
  'enable -n echo; echo ok',
  // arithmetic with code in plain sight
  "((a[$''(touch canary)]))",
  "echo ok; (( 'a[$''(touch canary)]' ))",
  // parser limits
  `echo ${'$(echo '.repeat(1000)}$(touch canary)${')'.repeat(1000)}`,
  `echo ok; ${'('.repeat(3000)}touch canary${')'.repeat(3000)}`,
  `echo ${'a'.repeat(90_000)}; touch canary`,
  'echo x\u00a0; touch canary',
];

function workspace() {
  const t = tempDir('tg-review-');
  writeFileSync(`${t.dir}/README.md`, 'hello\n');
  writeFileSync(`${t.dir}/victim`, 'keep\n');
  mkdirSync(`${t.dir}/.git/hooks`, { recursive: true });
  writeFileSync(`${t.dir}/.git/config`, '[core]\n');
  return t;
}

test(`review corpus (${PAYLOADS.length} payloads) is refused and the workspace is untouched`, async () => {
  const { dir, cleanup } = workspace();
  const h = new Harness([dir], { policy: policyFromYaml(POLICY) });
  const leaks: string[] = [];
  try {
    for (const payload of PAYLOADS) {
      const env = await h.call('run_command', { command: payload });
      const label = JSON.stringify(payload.length > 120 ? `${payload.slice(0, 120)}…` : payload);
      if (env.ok || !REFUSED.has(env.error!.code)) leaks.push(`${label} → ${env.ok ? 'ran' : env.error!.code}`);
      if (existsSync(`${dir}/canary`)) leaks.push(`${label} created the canary`);
      if (readFileSync(`${dir}/victim`, 'utf8') !== 'keep\n') leaks.push(`${label} changed victim`);
      if (readFileSync(`${dir}/.git/config`, 'utf8') !== '[core]\n') leaks.push(`${label} changed .git/config`);
      if (existsSync(`${dir}/.git/hooks/pre-commit`)) leaks.push(`${label} wrote a hook`);
    }
  } finally {
    h.close(); cleanup();
  }
  assert.deepEqual(leaks, []);
});
