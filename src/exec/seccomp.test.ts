// The keyring filter (review 33), run by a small interpreter of the classic BPF it uses: the three
// keyring calls refused on each architecture (x32's numbers too), their neighbours and other
// architectures let through. The end-to-end case is tests/attacks/review33-keyring.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyringFilter, keyringProgram } from './seccomp.js';

function run(arch: number, nr: number): number {
  const prog = keyringProgram();
  let A = 0;
  for (let pc = 0; pc < prog.length; pc++) {
    const [code, jt, jf, k] = prog[pc]!;
    switch (code) {
      case 0x20: A = k === 4 ? arch : k === 0 ? nr >>> 0 : NaN; break;
      case 0x54: A = (A & k) >>> 0; break;
      case 0x15: pc += A === k ? jt : jf; break;
      case 0x25: pc += A > k ? jt : jf; break;
      case 0x35: pc += A >= k ? jt : jf; break;
      case 0x06: return k;
      default: throw new Error(`opcode ${code}`);
    }
  }
  throw new Error('fell off the end');
}

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;

test('keyring and io_uring calls are refused with EPERM, their neighbours and other architectures are not', () => {
  const cases: Array<[string, number, number[], number[]]> = [
    ['x86_64', 0xc000003e, [248, 249, 250, 0x40000000 + 248, 0x40000000 + 250, 425, 426, 427, 0x40000000 + 425], [0, 1, 59, 247, 251, 0x40000000 + 251, 424, 428, 435]],
    ['i386', 0x40000003, [286, 287, 288, 425, 427], [11, 285, 289, 424, 428]],
    ['aarch64', 0xc00000b7, [217, 218, 219, 425, 426, 427], [63, 64, 216, 220, 221, 424, 428]],
  ];
  for (const [name, arch, refused, allowed] of cases) {
    for (const nr of refused) assert.equal(run(arch, nr), EPERM, `${name} ${nr}`);
    for (const nr of allowed) assert.equal(run(arch, nr), ALLOW, `${name} ${nr}`);
  }
  assert.equal(run(0xc00000f3 /* riscv64 */, 219), ALLOW);
  assert.equal(keyringFilter().length, keyringProgram().length * 8);
});
