import type { CommandWord } from '../core/types.js';
import { isAssignment, type CommandPart } from './analyze.js';
import { VI_LIKE } from './extract.js';
import { gitCall } from './git.js';

/** Longest option word whose glued suffixes are tried as paths. */
const MAX_SUFFIXED = 256;

/**
 * The texts in one word that a program may take as a path: the word; the value of `--opt=VALUE`
 * and `NAME=VALUE` (`awk -v f=priv/x`, `dd if=`); for a short-option cluster every suffix after
 * its first letter (`-tpriv`, `-mopriv/x`, `-fpriv/x`: which letters take a value differs by
 * program); the path of a `file:` URL (`curl file:///…/priv/x`).
 */
export function pathTexts(text: string): string[] {
  const out: string[] = [];
  if (text.startsWith('--')) {
    const eq = text.indexOf('=');
    if (eq > 0) out.push(text.slice(eq + 1));
  } else if (text.startsWith('-') && text.length > 2) {
    if (text.length <= MAX_SUFFIXED) for (let k = 2; k < text.length; k++) out.push(text.slice(k).replace(/^=/, ''));
  } else if (!text.startsWith('-')) {
    out.push(text);
    const eq = text.indexOf('=');
    if (eq > 0) out.push(text.slice(eq + 1));
  }
  const more = out.flatMap((t) => {
    const url = /^file:(\/\/[^/]*)?(\/.*)$/i.exec(t);
    // `@file`: a response file (gcc, ld, javac), curl's `-d @f`, `-F x=@f`, `--data-urlencode x@f`, `-F 'x=<f'`.
    // curl's `-F 'x=@a,b'` sends both files, `x=@a;type=…` one: each piece of such a list counts too.
    const after = (c: string) => (t.includes(c) ? [t.slice(t.indexOf(c) + 1)] : []);
    return url ? [decodeURIComponentSafe(url[2]!)] : [...after('@'), ...after('<')].flatMap((v) => [v, ...v.split(/[,;]/)]);
  });
  // Quoted text inside a word: code for an interpreter or awk (`open('priv/x')`, `getline < "priv/x"`),
  // best effort — code can build a path that appears nowhere.
  for (const m of text.matchAll(/(["'])([^"'\n]{1,4096}?)\1/g)) more.push(m[2]!);
  return [...new Set([...out, ...more])].filter((t) => t !== '' && !t.includes('\n'));
}

function decodeURIComponentSafe(s: string): string {
  try { return decodeURIComponent(s); } catch { return s; }
}

/** The words of a part a program is given (the program itself when it is a path), as written. */
export function operandWords(p: CommandPart): { prog: CommandWord | undefined; words: CommandWord[] } {
  const ws = p.asWritten ?? p.words;
  let i = 0;
  while (i < ws.length && isAssignment(ws[i]!)) i++;
  const prog = ws[i];
  return { prog, words: [...(prog && prog.text.includes('/') ? [prog] : []), ...ws.slice(i + 1)] };
}

/** `ln -s` with a relative target that climbs (`../priv`): moved later (`mv`, `cp -P`), it points anywhere. */
export function climbingLink(prog: CommandWord | undefined, words: CommandWord[]): CommandWord | null {
  if (!prog || prog.text.slice(prog.text.lastIndexOf('/') + 1) !== 'ln') return null;
  if (!words.some((w) => /^(-[A-Za-z]*s[A-Za-z]*|--symbolic)$/.test(w.text))) return null;
  const ops = words.filter((w) => !w.text.startsWith('-'));
  return ops.slice(0, -1).find((w) => !w.text.startsWith('/') && /(^|\/)\.\.(\/|$)/.test(w.text)) ?? null;
}

/** A `file:` URL with curl's globbing (`{a,b}`, `[a-z]`): it names paths no word shows. */
export const fileUrlGlob = (text: string): boolean => /file:[^\s]*[{}[\]]/i.test(text);

/**
 * curl's globbing of `-T`/`--upload-file` (`{a,b}`, `[1-2]`): the files it sends are named by no word.
 * (curl takes an unambiguous prefix of a long option; `-sT{a,b}` glues the value.)
 */
export function curlUploadGlob(prog: CommandWord | undefined, words: CommandWord[]): CommandWord | null {
  if (!prog || prog.text.slice(prog.text.lastIndexOf('/') + 1) !== 'curl') return null;
  const glob = (w: CommandWord | undefined) => !!w && /[{}[\]]/.test(w.text);
  for (let i = 0; i < words.length; i++) {
    const t = words[i]!.text;
    const long = /^(--up[a-z-]*)(=(.*))?$/.exec(t);
    if (long && '--upload-file'.startsWith(long[1]!)) {
      if (long[2] !== undefined ? /[{}[\]]/.test(long[3]!) : glob(words[i + 1])) return words[i]!;
      continue;
    }
    const short = /^-[A-Za-z0-9#:]*T(.*)$/.exec(t);
    if (short && !t.startsWith('--') && (short[1] ? /[{}[\]]/.test(short[1]) : glob(words[i + 1]))) return words[i]!;
  }
  return null;
}

/** Options that read the paths to work on from a file or input: the names are known only when it runs. */
const LIST_OPTS = ['--files-from', '--files0-from', '--pathspec-from-file'];

export function pathsFromFile(prog: CommandWord | undefined, words: CommandWord[]): CommandWord | null {
  const name = prog ? prog.text.slice(prog.text.lastIndexOf('/') + 1) : '';
  // cpio's list, the paths a patch names (`patch` reads it from a file or its input), ed's commands (`r`, `w`).
  if ((name === 'cpio' || name === 'patch' || name === 'ed' || name === 'red' || VI_LIKE.test(name)) && prog) return prog;
  // git apply / am: the paths are in the patch (a file or stdin). gitCall skips every global option with its value.
  if (name === 'git' && prog) {
    const argv = words[0] === prog ? words : [prog, ...words];
    const call = gitCall(argv);
    if (call.sub === 'apply' || call.sub === 'am' || (call.sub !== null && !argv[call.at]!.literal)) return argv[call.at]!;
  }
  const rf = responseFile(prog, words) ?? scriptFile(name, words);
  if (rf) return rf;
  for (const [i, w] of words.entries()) {
    if (w.text.startsWith('--') && w.text !== '--') {
      const opt = w.text.split('=')[0]!;
      if (opt.length > 4 && LIST_OPTS.some((o) => o.startsWith(opt))) return w;
      // zip's list of names from its input (any prefix zip takes: `--names-stdin`, `--na`).
      if (name === 'zip' && opt.length > 3 && '--names-stdin'.startsWith(opt)) return w;
      // curl's config file names URLs (file:…) no word shows.
      if (name === 'curl' && opt.length > 3 && '--config'.startsWith(opt)) return w;
    } else if (name === 'tar' && (/^-[A-Za-z]*T/.test(w.text) || (i === (words[0] === prog ? 1 : 0) && /^[A-Za-z]*T/.test(w.text)))) return w;
    else if (name === 'zip' && /^-[A-Za-z0-9]*@/.test(w.text)) return w;
    else if (name === 'curl' && /^-[A-Za-z]*K/.test(w.text)) return w;
  }
  return null;
}

/**
 * Programs that read more arguments from `@FILE` (a response file): binutils, the gcc and clang
 * drivers (`-Wl,@f` reaches the linker), as, ld, javac and java; cross (`x86_64-linux-gnu-gcc`),
 * versioned (`gcc-12`) and llvm (`llvm-nm`) names too.
 */
const RESPONSE_PROGS = /^([\w.+]+-)?(strings|nm|objdump|readelf|size|ar|ranlib|objcopy|strip|c\+\+filt|addr2line|elfedit|gprof|dlltool|windres|[a-z]*cc|gcc|g\+\+|c\+\+|cpp|clang|clang\+\+|clang-cpp|gfortran|gccgo|gdc|ld|ld\.bfd|ld\.gold|ld\.lld|lld|gold|as|javac|java|javadoc|javap|jar|jlink|jdeps|jpackage|kotlinc|scalac)(-[0-9][0-9.]*)?$/;

/** The `@FILE` word of a program that reads its arguments from it (the paths in it are named by no word), or null. */
export function responseFile(prog: CommandWord | undefined, words: CommandWord[]): CommandWord | null {
  const name = prog ? prog.text.slice(prog.text.lastIndexOf('/') + 1) : '';
  if (!prog?.literal || !RESPONSE_PROGS.test(name)) return null;
  return words.find((w) => w !== prog && /(^|,)@./.test(w.text)) ?? null;
}

/** A short option letter among `letters` in a cluster, read up to a letter that takes a value (`stops`). */
const inCluster = (t: string, letters: string, stops: string) => {
  if (!/^-[^-]/.test(t)) return false;
  for (const c of t.slice(1)) {
    if (letters.includes(c)) return true;
    if (stops.includes(c)) return false;
  }
  return false;
};
const longPrefix = (t: string, names: string[], min: number) => {
  const n = t.split('=')[0]!;
  return t.startsWith('--') && n.length >= min && names.some((x) => x.startsWith(n));
};

/**
 * sed's script from a file (`-f FILE`, `-f -`, `--file`) and awk's program or library from one
 * (`-f`, gawk's `-i`/`-E`/`-l` and their long forms): the files its `r`, `getline <` read are named by no word.
 */
export function scriptFile(name: string, words: CommandWord[]): CommandWord | null {
  if (name === 'sed' || name === 'gsed') return words.find((w) => inCluster(w.text, 'f', 'eli') || longPrefix(w.text, ['--file'], 4)) ?? null;
  if (/^(awk|gawk|mawk|nawk|busybox-awk)$/.test(name)) return words.find((w) => inCluster(w.text, 'fiEl', 'Fve') || longPrefix(w.text, ['--file', '--exec', '--include', '--load'], 4)) ?? null;
  return null;
}
