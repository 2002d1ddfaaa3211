import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A seccomp filter for bubblewrap (`--seccomp FD`) that refuses the kernel keyring calls —
 * add_key, request_key, keyctl — with EPERM, as Docker's default profile does (review 33). The
 * keyrings are not namespaced by anything the sandbox unshares: a command, a process of the
 * server's uid, possessed that uid's user keyring (Kerberos caches, eCryptfs and disk passphrases
 * kept there by the user's other processes) and could read, add or unlink its keys.
 *
 * Classic BPF over struct seccomp_data (nr at offset 0, arch at 4), for x86-64 (the x32 bit
 * masked off), i386 and aarch64; any other architecture is let through. Little-endian only.
 */
const LD_ABS = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGT = 0x25;
const JGE = 0x35;
const AND = 0x54; // BPF_ALU | BPF_AND | BPF_K
const RET = 0x06; // BPF_RET | BPF_K
const ALLOW = 0x7fff0000;
const EPERM = 0x00050000 | 1; // SECCOMP_RET_ERRNO | EPERM
const ARCH = { x86_64: 0xc000003e, i386: 0x40000003, aarch64: 0xc00000b7 };
/** add_key, request_key, keyctl are consecutive on each architecture: the first of them. */
const FIRST = { x86_64: 248, i386: 286, aarch64: 217 };

type Ins = [code: number, jt: number, jf: number, k: number];

/** The program, as its 8-byte instructions; jumps count the instructions they skip. */
export function keyringProgram(): Ins[] {
  return [
    [LD_ABS, 0, 0, 4], //                          0: arch
    [JEQ, 3, 0, ARCH.x86_64], //                   1: → 5
    [JEQ, 6, 0, ARCH.i386], //                     2: → 9
    [JEQ, 8, 0, ARCH.aarch64], //                  3: → 12
    [RET, 0, 0, ALLOW], //                         4: another architecture
    [LD_ABS, 0, 0, 0], //                          5: nr (x86-64)
    [AND, 0, 0, 0xbfffffff], //                    6: without the x32 bit
    [JGE, 0, 8, FIRST.x86_64], //                  7: below → 16
    [JGT, 7, 6, FIRST.x86_64 + 2], //              8: above → 16, else → 15
    [LD_ABS, 0, 0, 0], //                          9: nr (i386)
    [JGE, 0, 5, FIRST.i386], //                   10
    [JGT, 4, 3, FIRST.i386 + 2], //               11
    [LD_ABS, 0, 0, 0], //                         12: nr (aarch64)
    [JGE, 0, 2, FIRST.aarch64], //                13
    [JGT, 1, 0, FIRST.aarch64 + 2], //            14
    [RET, 0, 0, EPERM], //                        15
    [RET, 0, 0, ALLOW], //                        16
  ];
}

export function keyringFilter(): Buffer {
  const prog = keyringProgram();
  const b = Buffer.alloc(prog.length * 8);
  prog.forEach(([code, jt, jf, k], i) => {
    b.writeUInt16LE(code, i * 8);
    b.writeUInt8(jt, i * 8 + 2);
    b.writeUInt8(jf, i * 8 + 3);
    b.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return b;
}

let file: string | undefined;

/** The filter in a private file (written once per process), or null where it does not apply. */
export function keyringFilterFile(): string | null {
  if (process.platform !== 'linux' || os.endianness() !== 'LE' || !['x64', 'arm64', 'ia32'].includes(process.arch)) return null;
  if (file && existsSync(file)) return file;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'toolgate-seccomp-'));
  const f = path.join(dir, 'keyring.bpf');
  writeFileSync(f, keyringFilter(), { mode: 0o444 });
  chmodSync(dir, 0o500);
  file = f;
  return f;
}

/**
 * bwrap with the filter: bwrap takes it from a descriptor, so a shell opens the file on fd 9 and
 * becomes bwrap (one exec, ~0.3 ms). `args` are bwrap's. Without a filter, bwrap as it is.
 */
export function withKeyringFilter(bwrap: string, args: string[]): { file: string; args: string[] } {
  const f = keyringFilterFile();
  if (!f) return { file: bwrap, args };
  return { file: '/bin/sh', args: ['-c', 'f=$1; shift; exec "$0" --seccomp 9 "$@" 9<"$f"', bwrap, f, ...args] };
}
