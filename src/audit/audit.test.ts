// The audit hash chain: the writer keeps it across restarts and other writers; verify detects tampering.
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, rmSync, truncateSync, writeFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { tempDir } from '../testing/helpers.js';
import { GENESIS, hashLine } from './record.js';
import { verifyAudit } from './verify.js';
import { AuditWriter } from './writer.js';
import { auditRec } from './test-support.js';

const rec = auditRec;

/** A fresh audit file with `n` records written by one writer. */
function logWith(n: number): { file: string; cleanup: () => void } {
  const { dir, cleanup } = tempDir('tg-audit-');
  const file = path.join(dir, 'state', 'audit.jsonl');
  const w = new AuditWriter(file);
  for (let i = 0; i < n; i++) w.append(rec(i));
  w.close();
  return { file, cleanup };
}

const linesOf = (file: string) => readFileSync(file, 'utf8').split('\n').slice(0, -1);
const writeLines = (file: string, lines: string[]) => writeFileSync(file, lines.map((l) => l + '\n').join(''));

describe('the writer', () => {
  test('chains every record to the one before, from the genesis hash', () => {
    const { file, cleanup } = logWith(3);
    const lines = linesOf(file);
    assert.equal(lines.length, 3);
    assert.equal(JSON.parse(lines[0]!).prev_hash, GENESIS);
    assert.equal(JSON.parse(lines[1]!).prev_hash, hashLine(lines[0]!));
    assert.equal(JSON.parse(lines[2]!).prev_hash, hashLine(lines[1]!));
    assert.equal(readFileSync(`${file}.head`, 'utf8').split(' ')[0], hashLine(lines[2]!));
    cleanup();
  });

  test('every line is one JSON record with the SPEC fields', () => {
    const { file, cleanup } = logWith(1);
    const r = JSON.parse(linesOf(file)[0]!);
    for (const k of ['ts_start', 'ts_end', 'trace_id', 'tool_call_id', 'session_id', 'tool', 'version', 'risk', 'args', 'decision', 'rule', 'approval', 'ok', 'status', 'error_code', 'duration_ms', 'files_changed', 'commands_run', 'hashes', 'prev_hash']) {
      assert.ok(k in r, k);
    }
    cleanup();
  });

  test('continues the chain across a restart', async () => {
    const { file, cleanup } = logWith(2);
    const w = new AuditWriter(file);
    w.append(rec(2));
    w.close();
    assert.deepEqual(await verifyAudit(file), { ok: true, records: 3 });
    cleanup();
  });

  test('continues the chain when another process appended meanwhile', async () => {
    const { file, cleanup } = logWith(0);
    const a = new AuditWriter(file);
    const b = new AuditWriter(file);
    a.append(rec(0));
    b.append(rec(1));
    a.append(rec(2));
    a.append(rec(3));
    b.append(rec(4));
    a.close();
    b.close();
    assert.deepEqual(await verifyAudit(file), { ok: true, records: 5 });
    cleanup();
  });

  test('after a crash cut a record in the middle, the next start ends the line, says so in a record, and the log verifies', async () => {
    const { file, cleanup } = logWith(2);
    // Killed mid-write: half a record (cut inside a multi-byte character too), the head still names line 2.
    const third = JSON.stringify({ ...rec(2), args: { path: 'é'.repeat(50) }, prev_hash: hashLine(linesOf(file)[1]!) });
    const bytes = Buffer.from(third, 'utf8');
    appendFileSync(file, bytes.subarray(0, bytes.indexOf(0xa9) /* cut after the first byte of é */));
    const w = new AuditWriter(file);
    w.append(rec(9));
    w.close();
    const lines = linesOf(file);
    assert.equal(lines.length, 5, 'two records, the cut line, the record that ends it, the new one');
    const marker = JSON.parse(lines[3]!);
    assert.equal(marker.tool, 'toolgate/audit');
    assert.equal(marker.status, 'cut_line_ended');
    assert.equal(marker.prev_hash, hashLine(lines[2]!));
    // the new record survives whole, chained to the marker
    assert.equal(JSON.parse(lines[4]!).tool_call_id, 'tc_9');
    assert.equal(JSON.parse(lines[4]!).prev_hash, hashLine(lines[3]!));
    const v = await verifyAudit(file);
    assert.equal(v.ok, true, JSON.stringify(v));
    assert.equal(v.records, 5);
    assert.match(v.note ?? '', /line 3 is a record cut by a crash/);
    cleanup();
  });

  test('a start on a cut tail ends it at once (no call needed) and the log verifies', async () => {
    const { file, cleanup } = logWith(3);
    appendFileSync(file, '{"ts_start":"2024-');
    new AuditWriter(file).close();
    assert.equal(readFileSync(file, 'utf8').endsWith('\n'), true);
    const v = await verifyAudit(file);
    assert.equal(v.ok, true, JSON.stringify(v));
    assert.match(v.note ?? '', /line 4 is a record cut by a crash/);
    // A second start finds nothing to end.
    new AuditWriter(file).close();
    assert.equal(linesOf(file).length, 5);
    cleanup();
  });

  test('the file is created private (0600)', () => {
    const { file, cleanup } = logWith(1);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    cleanup();
  });
});

describe('verify', () => {
  test('passes on an intact file', async () => {
    const { file, cleanup } = logWith(5);
    assert.deepEqual(await verifyAudit(file), { ok: true, records: 5 });
    cleanup();
  });

  const rows: Array<[string, (lines: string[], file: string) => void, number]> = [
    ['a modified middle line', (l, f) => { l[2] = l[2]!.replace('f2.txt', 'f2.TXT'); writeLines(f, l); }, 4],
    ['a modified first line', (l, f) => { l[0] = l[0]!.replace('"ok":true', '"ok":false'); writeLines(f, l); }, 2],
    ['a modified last line', (l, f) => { l[4] = l[4]!.replace('allow', 'deny'); writeLines(f, l); }, 5],
    ['whitespace added to a line', (l, f) => { l[1] = l[1]! + ' '; writeLines(f, l); }, 3],
    ['a removed middle line', (l, f) => { l.splice(2, 1); writeLines(f, l); }, 3],
    ['a removed first line', (l, f) => { l.shift(); writeLines(f, l); }, 1],
    ['two lines swapped', (l, f) => { [l[1], l[2]] = [l[2]!, l[1]!]; writeLines(f, l); }, 2],
    ['the last two lines swapped', (l, f) => { [l[3], l[4]] = [l[4]!, l[3]!]; writeLines(f, l); }, 4],
    ['a line duplicated', (l, f) => { l.splice(3, 0, l[2]!); writeLines(f, l); }, 4],
    ['a forged line inserted', (l, f) => { l.splice(1, 0, JSON.stringify({ ...rec(99), prev_hash: hashLine(l[0]!) })); writeLines(f, l); }, 3],
    ['a blank line inserted', (l, f) => { l.splice(2, 0, ''); writeLines(f, l); }, 3],
    ['a cut tail (whole last line removed)', (l, f) => { l.pop(); writeLines(f, l); }, 4],
    ['a cut tail of several lines', (l, f) => { writeLines(f, l.slice(0, 2)); }, 2],
    ['every line removed', (_l, f) => { writeFileSync(f, ''); }, 0],
    ['a truncated last line', (_l, f) => { truncateSync(f, statSync(f).size - 10); }, 5],
    ['the newline of the last line cut', (_l, f) => { truncateSync(f, statSync(f).size - 1); }, 5],
    ['the head file removed', (_l, f) => { rmSync(`${f}.head`); }, 5],
    ['the head file edited', (_l, f) => { writeFileSync(`${f}.head`, `${'a'.repeat(64)} 0\n`); }, 5],
  ];
  for (const [name, tamper, badLine] of rows) {
    test(`detects ${name}`, async () => {
      const { file, cleanup } = logWith(5);
      tamper(linesOf(file), file);
      const v = await verifyAudit(file);
      assert.equal(v.ok, false, `not detected: ${JSON.stringify(v)}`);
      assert.equal(v.bad_line, badLine, v.problem);
      assert.ok(v.problem && v.problem.length > 0);
      cleanup();
    });
  }

  test('a record cut while it was written (killed mid-write, never acknowledged) is reported as unfinished, not as tampering', async () => {
    const { file, cleanup } = logWith(5);
    const sixth = JSON.stringify({ ...rec(5), prev_hash: hashLine(linesOf(file)[4]!) });
    appendFileSync(file, sixth.slice(0, 40)); // the head was not rewritten: the writer was killed first
    const v = await verifyAudit(file);
    assert.equal(v.ok, true, JSON.stringify(v));
    assert.equal(v.records, 5);
    assert.match(v.note ?? '', /line 6 is an unfinished record/);
    // The same cut line after an edited record before it is still caught.
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[2] = lines[2]!.replace('f2.txt', 'f2.TXT');
    writeFileSync(file, lines.join('\n'));
    assert.equal((await verifyAudit(file)).ok, false);
    cleanup();
  });

  test('a whole record written before the head (killed between the two writes) passes with a note; two past the head do not', async () => {
    const { file, cleanup } = logWith(5);
    const sixth = JSON.stringify({ ...rec(5), prev_hash: hashLine(linesOf(file)[4]!) });
    appendFileSync(file, `${sixth}\n`); // the head still names line 5
    const v = await verifyAudit(file);
    assert.equal(v.ok, true, JSON.stringify(v));
    assert.equal(v.records, 6);
    assert.match(v.note ?? '', /line 6 was written but .head not yet updated/);
    const seventh = JSON.stringify({ ...rec(6), prev_hash: hashLine(sixth) });
    appendFileSync(file, `${seventh}\n`);
    const w = await verifyAudit(file);
    assert.equal(w.ok, false, 'the head names neither of the last two records');
    cleanup();
  });

  test('a line that is not JSON passes only with the record that ends a cut line right after it, chained to it', async () => {
    const { file, cleanup } = logWith(3);
    appendFileSync(file, '{"ts_start":"2024-');
    const w = new AuditWriter(file);
    w.append(rec(7));
    w.close();
    const good = linesOf(file); // 3 records, cut line (4), marker (5), record 7 (6)
    assert.equal((await verifyAudit(file)).ok, true);
    const cases: Array<[string, (l: string[]) => string[], number]> = [
      ['the cut line edited afterwards', (l) => { l[3] = l[3]!.replace('2024', '2025'); return l; }, 4],
      ['the marker removed', (l) => { l.splice(4, 1); return l; }, 4],
      ['the marker moved after the next record', (l) => [...l.slice(0, 4), l[5]!, l[4]!], 4],
      ['a second garbage line before the marker', (l) => [...l.slice(0, 4), 'garbage', ...l.slice(4)], 4],
      ['garbage inserted in the middle, with a copy of the marker after it', (l) => [l[0]!, 'garbage', l[4]!, ...l.slice(1)], 2],
      ['a record before the cut line edited', (l) => { l[1] = l[1]!.replace('f1.txt', 'f1.TXT'); return l; }, 3],
    ];
    for (const [name, change, bad] of cases) {
      writeLines(file, change([...good]));
      const v = await verifyAudit(file);
      assert.equal(v.ok, false, `${name}: ${JSON.stringify(v)}`);
      assert.equal(v.bad_line, bad, `${name}: ${JSON.stringify(v)}`);
    }
    cleanup();
  });

  test('a missing file is an error, not a pass', async () => {
    await assert.rejects(verifyAudit('/nonexistent/audit.jsonl'));
  });
});
