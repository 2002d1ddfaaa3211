// A node:test reporter used beside `spec`: it collects every skipped test and, once the run
// ends, prints them by name with the reason given to `skip` ("Skipped (N): name — reason"),
// so a run on a machine without bubblewrap, ripgrep, a browser or a Docker engine says what
// it did not test. The standard `ℹ tests N / ℹ pass N / ℹ fail N` lines stay spec's.
import path from 'node:path';

export default async function* skipReporter(source) {
  const skipped = [];
  let passed = 0;
  let failed = 0;
  let todo = 0;
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { skip, name, file } = event.data;
    if (event.data.details?.type !== 'suite' && (skip === undefined || skip === false)) {
      // A todo test (a known open problem, described in its reason) fails without failing the run.
      if (event.data.todo !== undefined && event.data.todo !== false) todo++;
      else if (event.type === 'test:pass') passed++;
      else failed++;
    }
    if (skip === undefined || skip === false) continue;
    const where = file ? path.relative(process.cwd(), file) : '';
    skipped.push({ name, where, reason: typeof skip === 'string' && skip ? skip : '(no reason given)' });
  }
  const lines = skipped.map((s) => `  - ${s.name} — ${s.reason}${s.where ? ` [${s.where}]` : ''}`);
  yield `\nSkipped (${skipped.length})${skipped.length ? `:\n${lines.join('\n')}` : ''}\n`;
  // One plain closing line, whatever reads the end of the log.
  yield `tests: ${passed} passed, ${failed} failed, ${skipped.length} skipped${todo ? `, ${todo} todo` : ''}\n`;
}
