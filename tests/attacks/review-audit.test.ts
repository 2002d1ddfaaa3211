// Attack review of the cut-line marker (commit 95d427e): a line a crash cut is accepted by verify
// only with the marker record after it. Each attempt here must FAIL verify, each control must pass.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { tempDir } from '../../src/testing/helpers.js';
import { hashLine } from '../../src/audit/record.js';
import { verifyAudit } from '../../src/audit/verify.js';
import { AuditWriter } from '../../src/audit/writer.js';
import { auditRec } from '../../src/audit/test-support.js';

const rec = auditRec;
const linesOf = (file: string) => readFileSync(file, 'utf8').split('\n').slice(0, -1);
const writeLines = (file: string, lines: string[]) => writeFileSync(file, lines.map((l) => l + '\n').join(''));

/** n records, then a cut line ended by a restart, then `after` more records. */
function logWithCut(n: number, after: number, cut = '{"ts_start":"2024-'): { file: string; cleanup: () => void } {
  const { dir, cleanup } = tempDir('tg-raudit-');
  const file = path.join(dir, 'state', 'audit.jsonl');
  let w = new AuditWriter(file);
  for (let i = 0; i < n; i++) w.append(rec(i));
  w.close();
  appendFileSync(file, cut);
  w = new AuditWriter(file);
  for (let i = 0; i < after; i++) w.append(rec(100 + i));
  w.close();
  return { file, cleanup };
}

describe('attacks on the cut-line marker', () => {
  test('the record just before a cut line cannot be edited or removed without verify noticing', async (t) => {
    const { file, cleanup } = logWithCut(3, 2);
    t.after(cleanup);
    const good = linesOf(file); // r0 r1 r2 CUT MARKER r100 r101
    assert.equal(good.length, 7);
    const v0 = await verifyAudit(file);
    assert.equal(v0.ok, true, JSON.stringify(v0));
    const cases: Array<[string, (l: string[]) => string[]]> = [
      ['the record before the cut line edited', (l) => { l[2] = l[2]!.replace('f2.txt', 'evil.txt'); return l; }],
      ['the record before the cut line removed', (l) => { l.splice(2, 1); return l; }],
      ['every record before the cut line removed', (l) => l.slice(3)],
      ['two records before the cut line swapped', (l) => [l[0]!, l[2]!, l[1]!, ...l.slice(3)]],
    ];
    for (const [name, change] of cases) {
      writeLines(file, change([...good]));
      const v = await verifyAudit(file);
      assert.equal(v.ok, false, `${name}: ${JSON.stringify(v)}`);
    }
  });

  test('a copied marker or a crafted one cannot carry garbage into the middle of the log', async (t) => {
    const { file, cleanup } = logWithCut(3, 2);
    t.after(cleanup);
    const good = linesOf(file);
    const marker = JSON.parse(good[4]!);
    const craft = (g: string) => JSON.stringify({ ...marker, prev_hash: hashLine(g), args: { cut_line_chars: g.length, cut_line_sha256: hashLine(g) } });
    const cases: Array<[string, (l: string[]) => string[]]> = [
      ['a crafted marker after a record replaced by garbage', (l) => { l.splice(1, 1, 'garbage', craft('garbage')); return l; }],
      ['garbage + crafted marker appended at the end', (l) => [...l, 'garbage', craft('garbage')]],
      ['the cut line and its marker copied to the end', (l) => [...l, l[3]!, l[4]!]],
      ['the cut line and its marker moved to the top', (l) => [l[3]!, l[4]!, ...l.slice(0, 3), ...l.slice(5)]],
    ];
    for (const [name, change] of cases) {
      writeLines(file, change([...good]));
      const v = await verifyAudit(file);
      assert.equal(v.ok, false, `${name}: ${JSON.stringify(v)}`);
    }
  });

  test('a crash between the marker write and the head write still verifies (never acknowledged)', async (t) => {
    const { file, cleanup } = logWithCut(3, 0);
    t.after(cleanup);
    // Put the head back to what it was before the restart wrote the marker: the state a SIGKILL
    // between the marker and head writes leaves.
    const lines = linesOf(file);
    writeFileSync(`${file}.head`, `${hashLine(lines[2]!)} ${'0'.padStart(20, '0')}\n`);
    const v = await verifyAudit(file);
    assert.equal(v.ok, true, JSON.stringify(v));
    // ...and the next start carries on and verifies too
    const w = new AuditWriter(file);
    w.append(rec(50));
    w.close();
    const v2 = await verifyAudit(file);
    assert.equal(v2.ok, true, JSON.stringify(v2));
  });

  test('controls: a cut past 64 KiB, inside a 4-byte character, at the newline itself, repeated crashes', async (t) => {
    const big = JSON.stringify({ ...rec(7), args: { text: '𝄞'.repeat(40_000) }, prev_hash: 'x' });
    const bytes = Buffer.from(big, 'utf8');
    const cuts: Array<[string, Buffer]> = [
      ['past 64 KiB inside a 4-byte char', bytes.subarray(0, 100_001 + 2)],
      ['at 1 byte', bytes.subarray(0, 1)],
    ];
    for (const [name, cut] of cuts) {
      const { dir, cleanup } = tempDir('tg-raudit-');
      t.after(cleanup);
      const file = path.join(dir, 'audit.jsonl');
      let w = new AuditWriter(file);
      w.append(rec(0)); w.append(rec(1));
      w.close();
      appendFileSync(file, cut);
      w = new AuditWriter(file);
      w.append(rec(2));
      w.close();
      // crash again, then once more with only the newline missing
      appendFileSync(file, cut.subarray(0, Math.max(1, cut.length >> 1)));
      w = new AuditWriter(file);
      w.append(rec(3));
      w.close();
      const v = await verifyAudit(file);
      assert.equal(v.ok, true, `${name}: ${JSON.stringify(v)}`);
      const all = linesOf(file);
      assert.deepEqual(all.flatMap((l) => { try { return [JSON.parse(l).tool_call_id as string]; } catch { return []; } }).filter((x) => x.startsWith('tc_')), ['tc_0', 'tc_1', 'tc_2', 'tc_3'], name);
    }
    // the newline itself was the cut: the last line is a whole record without '\n'
    const { dir, cleanup } = tempDir('tg-raudit-');
    t.after(cleanup);
    const file = path.join(dir, 'audit.jsonl');
    let w = new AuditWriter(file);
    w.append(rec(0));
    w.close();
    const whole = JSON.stringify({ ...rec(1), prev_hash: hashLine(linesOf(file)[0]!) });
    appendFileSync(file, whole);
    assert.equal((await verifyAudit(file)).ok, true);
    w = new AuditWriter(file);
    w.append(rec(2));
    w.close();
    const v = await verifyAudit(file);
    assert.equal(v.ok, true, JSON.stringify(v));
  });
});

describe('another writer in the middle of a long append', () => {
  test('a half-written last line that another process is still writing is not taken for a crash: no marker, its record whole, the log verifies', async (t) => {
    const { dir, cleanup } = tempDir('tg-raudit-live-');
    t.after(cleanup);
    const file = path.join(dir, 'state', 'audit.jsonl');
    const w0 = new AuditWriter(file);
    for (let i = 0; i < 2; i++) w0.append(rec(i));
    w0.close();
    // The other writer's record, chained as an AuditWriter would chain it; it writes the first
    // half, then the rest 20 ms later (a long append seen half done).
    const other = JSON.stringify({ ...rec(50), prev_hash: hashLine(linesOf(file)[1]!) });
    const half = Math.floor(other.length / 2);
    const script = `const fs=require('fs');fs.appendFileSync(${JSON.stringify(file)},${JSON.stringify(other.slice(0, half))});setTimeout(()=>fs.appendFileSync(${JSON.stringify(file)},${JSON.stringify(other.slice(half) + '\n')}),20);`;
    const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    const exited = new Promise((r) => child.on('exit', r));
    // Start as soon as the first half is there.
    for (let i = 0; i < 400 && readFileSync(file, 'utf8').endsWith('\n'); i++) await new Promise((r) => setTimeout(r, 2));
    assert.equal(readFileSync(file, 'utf8').endsWith('\n'), false, 'control: the line was seen half written');
    const w = new AuditWriter(file);
    w.append(rec(9));
    w.close();
    await exited;
    const lines = linesOf(file);
    assert.deepEqual(lines.map((l) => JSON.parse(l).tool_call_id), ['tc_0', 'tc_1', 'tc_50', 'tc_9'], 'no marker, nothing glued, the other record whole');
    const v = await verifyAudit(file);
    assert.equal(v.ok, true, JSON.stringify(v));
  });
});
