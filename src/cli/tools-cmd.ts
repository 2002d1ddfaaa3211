import { evaluate } from '../policy/evaluate.js';
import { setup, type CommonFlags } from './setup.js';

export async function toolsCommand(flags: CommonFlags & { json?: boolean }): Promise<number> {
  const { rt } = await setup(flags);
  const rows = [...rt.tools.values()].map((t) => {
    const v = evaluate(t, [], rt.policy);
    return { name: t.name, version: t.version, risk: t.risk, permissions: t.permissions, decision: v.decision, rule: v.rule };
  });
  if (flags.json) {
    process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
  } else {
    const w = Math.max(...rows.map((r) => r.name.length));
    process.stdout.write(`policy: ${rt.policy.origin}, profile: ${rt.policy.profile}, mode: ${rt.policy.mode}\n`);
    for (const r of rows) {
      process.stdout.write(`${r.name.padEnd(w)}  ${r.version.padEnd(6)} ${r.risk.padEnd(6)} ${r.decision.padEnd(5)}  ${(r.permissions.join(',') || '-').padEnd(22)} ${r.rule}\n`);
    }
  }
  rt.close();
  return 0;
}
