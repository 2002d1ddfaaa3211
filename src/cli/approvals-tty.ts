import type { ServerEntry } from '../approvals/registry.js';
import type { ApprovalDecision, RequestView } from '../approvals/inbox.js';
import { oneLine } from '../core/approval.js';
import { pendingOf, sendAnswer } from './approvals-cmd.js';
import type { CommonFlags } from './setup.js';

const KEYS: Record<string, ApprovalDecision | 'skip' | 'quit'> = {
  o: 'allow_once', s: 'allow_session', a: 'allow_always', d: 'deny', n: 'skip', q: 'quit', '\u0003': 'quit',
};

const color = (code: number, s: string) => (process.stdout.hasColors?.() ? `\u001b[${code}m${s}\u001b[0m` : s);

function show(r: RequestView, i: number, n: number): void {
  const out: string[] = [
    '',
    color(1, `[${i + 1}/${n}] request ${r.id} — ${r.tool} (${r.risk} risk)`) + (r.waiting ? '' : color(33, '  (the call stopped waiting: an answer applies once to its retry)')),
    `what:      ${oneLine(r.summary)}`,
    `why asked: ${oneLine(r.rule)}`,
    `server:    pid ${r.server_pid}, session ${r.session_id}, since ${r.created_at}`,
    'arguments (exactly what will run):',
    ...JSON.stringify(r.args, null, 2).split('\n').map((l) => `  ${oneLine(l)}`),
  ];
  if (r.diff) {
    out.push('the change it would make:');
    for (const l of r.diff.split('\n')) out.push(l.startsWith('+') && !l.startsWith('+++') ? color(32, oneLine(l)) : l.startsWith('-') && !l.startsWith('---') ? color(31, oneLine(l)) : oneLine(l));
  }
  out.push(`"session" / "always" grant: ${oneLine(r.grant.join('; '))}`);
  out.push(color(1, '[o] allow once  [s] allow for the session  [a] always allow  [d] deny  [n] next  [q] quit'));
  process.stdout.write(out.join('\n') + '\n');
}

function key(): Promise<string> {
  return new Promise((resolve) => {
    process.stdin.setRawMode(true);
    process.stdin.resume();
    process.stdin.once('data', (b: Buffer) => {
      process.stdin.setRawMode(false);
      process.stdin.pause();
      resolve(b.toString('utf8').slice(0, 1).toLowerCase());
    });
  });
}

/** On a terminal: the pending requests one at a time, one key per answer. */
export async function interactiveApprovals(servers: ServerEntry[], _flags: CommonFlags): Promise<number> {
  const skipped = new Set<string>();
  for (;;) {
    const pending = (await pendingOf(servers)).filter((p) => !skipped.has(p.id));
    if (pending.length === 0) {
      process.stdout.write(servers.length ? 'No pending approval requests.\n' : 'No running toolgate server found.\n');
      return 0;
    }
    const r = pending[0]!;
    show(r, 0, pending.length);
    let choice: (typeof KEYS)[string] | undefined;
    while (!(choice = KEYS[await key()]));
    if (choice === 'quit') return 0;
    if (choice === 'skip') { skipped.add(r.id); continue; }
    const res = await sendAnswer(servers.filter((s) => s.pid === r.server_pid), r.id, choice);
    process.stdout.write(`${res.ok ? '✓' : '✗'} ${res.message}\n`);
  }
}
