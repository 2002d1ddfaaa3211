import { chmodSync, lstatSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
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
const ARCH = { x86_64: 0xc000003e, i386: 0x40000003, aarch64: 0xc00000b7 } as const;
/**
 * Refused per architecture, as [first, last] ranges: add_key, request_key, keyctl (consecutive on
 * each), and io_uring_setup/enter/register (425–427 everywhere: kernel surface Docker's default
 * profile refuses too, review 34).
 */
export const REFUSED: Record<keyof typeof ARCH, Array<[number, number]>> = {
  x86_64: [[248, 250], [425, 427]],
  i386: [[286, 288], [425, 427]],
  aarch64: [[217, 219], [425, 427]],
};

type Ins = [code: number, jt: number, jf: number, k: number];
interface Sym { code: number; k: number; jt?: string; jf?: string; label?: string }

/** The program, as its 8-byte instructions; jumps count the instructions they skip. */
export function keyringProgram(): Ins[] {
  const p: Sym[] = [{ code: LD_ABS, k: 4 }];
  for (const a of Object.keys(ARCH) as Array<keyof typeof ARCH>) p.push({ code: JEQ, k: ARCH[a], jt: a });
  p.push({ code: RET, k: ALLOW }); // another architecture
  for (const a of Object.keys(ARCH) as Array<keyof typeof ARCH>) {
    p.push({ code: LD_ABS, k: 0, label: a });
    if (a === 'x86_64') p.push({ code: AND, k: 0xbfffffff }); // the x32 bit off
    REFUSED[a].forEach(([lo, hi], n) => {
      const next = n + 1 < REFUSED[a].length ? `${a}-${n + 1}` : 'allow';
      p.push({ code: JGE, k: lo, jf: next, label: n > 0 ? `${a}-${n}` : undefined });
      p.push({ code: JGT, k: hi, jt: next, jf: 'deny' });
    });
  }
  p.push({ code: RET, k: EPERM, label: 'deny' }, { code: RET, k: ALLOW, label: 'allow' });
  const at = new Map(p.flatMap((x, i) => (x.label ? [[x.label, i] as const] : [])));
  const off = (i: number, l?: string) => (l === undefined ? 0 : at.get(l)! - i - 1);
  return p.map((x, i) => [x.code, off(i, x.jt), off(i, x.jf), x.k]);
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

const made = new Map<string, string>();
let exitHook = false;

/**
 * The filter in a private file, or null where it does not apply. Written once per folder it lives
 * in, and looked at again before each use (owner, modes, content): bwrap reads it for every
 * command. Its folder is the temp dir unless that lies in a workspace root — a sandboxed command
 * writes there, and could replace the filter for the next command (review 34) — then /tmp.
 */
export function keyringFilterFile(roots: readonly string[] = []): string | null {
  if (process.platform !== 'linux' || os.endianness() !== 'LE' || !['x64', 'arm64', 'ia32'].includes(process.arch)) return null;
  const base = privateBase(roots);
  // Fail closed: launch() refuses such a layout first, with what to do (review 35).
  if (!base) throw new Error('every temp folder lies in a workspace root: no private place for the seccomp filter');
  const want = keyringFilter();
  const known = made.get(base);
  if (known && stillOurs(known, want)) return known;
  try {
    const dir = mkdtempSync(path.join(base, 'toolgate-seccomp-'));
    const f = path.join(dir, 'keyring.bpf');
    writeFileSync(f, want, { mode: 0o444 });
    chmodSync(dir, 0o500);
    made.set(base, f);
    if (!exitHook) {
      exitHook = true;
      process.on('exit', () => { for (const m of made.values()) { try { chmodSync(path.dirname(m), 0o700); rmSync(path.dirname(m), { recursive: true, force: true }); } catch { /* gone */ } } });
    }
    return f;
  } catch (e) {
    // Fail closed (review 36): no command runs without the filter where it applies.
    throw new Error(`could not write the seccomp filter under ${base}: ${(e as Error).message}`);
  }
}

/** A folder for toolgate's own files that no workspace root holds: the temp dir, else /tmp, /var/tmp. */
export function privateBase(roots: readonly string[]): string | null {
  for (const c of [os.tmpdir(), '/tmp', '/var/tmp']) {
    let real: string;
    try { real = realpathSync(c); } catch { continue; }
    if (!roots.some((r) => real === r || real.startsWith(`${r}/`) || r === '/')) return real;
  }
  return null;
}

/** The file and its folder are this process's user's, closed to others and unchanged. */
function stillOurs(f: string, want: Buffer): boolean {
  try {
    const uid = process.getuid?.();
    for (const p of [path.dirname(f), f]) {
      const st = lstatSync(p);
      if (st.isSymbolicLink() || st.uid !== uid || (st.mode & 0o222) !== 0) return false;
    }
    return readFileSync(f).equals(want);
  } catch {
    return false;
  }
}

/**
 * bwrap with the filter: bwrap takes it from a descriptor, so a shell opens the file on fd 9 and
 * becomes bwrap (one exec, ~0.3 ms). `args` are bwrap's. Without a filter, bwrap as it is.
 */
export function withKeyringFilter(bwrap: string, args: string[], roots: readonly string[] = []): { file: string; args: string[] } {
  const f = keyringFilterFile(roots);
  if (!f) return { file: bwrap, args };
  return { file: '/bin/sh', args: ['-c', 'f=$1; shift; exec "$0" --seccomp 9 "$@" 9<"$f"', bwrap, f, ...args] };
}
