import type { CommandWord } from '../core/types.js';
import type { FileRef } from './effects.js';
import { gitCall } from './git.js';

/** The paths an archive (or a patch) names: known only when it runs (its content is data, not text). */
const NAMED_INSIDE: CommandWord = { text: '{paths named inside the archive or patch}', literal: false };

/** Any option word of `words` that is a short-option cluster holding one of `letters` (`-xvzf`). */
const cluster = (words: string[], letters: string, stop = '') => words.some((t) => {
  if (!/^-[^-]/.test(t)) return false;
  for (const c of t.slice(1)) {
    if (letters.includes(c)) return true;
    if (stop.includes(c)) return false;
  }
  return false;
});
/** A long option written whole or as a prefix of at least `min` characters (`--ext`, `--extract`). */
const long = (words: string[], names: string[], min: number) =>
  words.some((t) => { const n = t.split('=')[0]!; return t.startsWith('--') && n.length >= min && names.some((x) => x.startsWith(n)); });

/** tar's short options that take a value: the letters after one of them in a cluster are that value. */
const TAR_VALUE = 'bCfFgHIKLNTVX';

/**
 * Whether the command unpacks an archive into files, writing (and linking) the paths the
 * archive names: tar x / --extract / --get, unzip, 7z x|e, ar x, pax -r, cpio -i / -p,
 * jar x, unrar x|e, uudecode. Unpacking to standard output (tar -O, unzip -p, 7z -so) writes nothing.
 */
export function extracts(prog: string, words: CommandWord[]): boolean {
  const t = words.slice(1).map((w) => w.text);
  const bare = t[0] !== undefined && /^[A-Za-z]+$/.test(t[0]) ? t[0] : '';
  switch (prog) {
    case 'tar': case 'bsdtar': case 'gtar': {
      const x = /x/.test(bare) || cluster(t, 'x', TAR_VALUE) || long(t, ['--extract', '--get'], 4);
      const toStdout = /O/.test(bare) || cluster(t, 'O', TAR_VALUE) || long(t, ['--to-stdout'], 6);
      return x && !toStdout;
    }
    case 'jar': return /x/.test(bare) || cluster(t, 'x', 'fCem') || long(t, ['--extract'], 4);
    case 'unzip': return !cluster(t, 'lvtpcZz', 'dxP');
    case '7z': case '7za': case '7zr': return /^[xe]$/i.test(t.find((w) => !w.startsWith('-')) ?? '') && !t.includes('-so');
    case 'unrar': case 'rar': return /^[xe]$/i.test(t.find((w) => !w.startsWith('-')) ?? '');
    case 'ar': return /^-?[A-Za-z]*x/.test(t.find((w) => !/^--/.test(w)) ?? '');
    case 'pax': return cluster(t, 'r', 'fsoxbpTU');
    case 'cpio': return cluster(t, 'ip', 'CEFHIMORV') || long(t, ['--extract', '--pass-through'], 4);
    case 'uudecode': return !cluster(t, 'o') && !long(t, ['--output-file'], 3);
    // dpkg-deb -x/-X/-R/-e (and dpkg's -x/-X/-e, handed to dpkg-deb) unpack the package's files or control files.
    case 'dpkg-deb': return cluster(t, 'xXRe') || long(t, ['--extract', '--vextract', '--raw-extract', '--control'], 4);
    case 'dpkg': return cluster(t, 'xXe') || long(t, ['--extract', '--vextract', '--control'], 4);
    default: return patches(prog, words, t);
  }
}

/**
 * ex and vi by any name (`ex -s`, `vim -es`, `editor`, `vim.basic`, `nvim --headless`): like ed, their
 * commands (`+cmd`, `-c cmd`, `-S file`, their input) run shell commands and write any path.
 */
export const VI_LIKE = /^(ex|vi|vim|nvim|view|vimdiff|rvim|rview|gvim|gview|evim|eview|nvi|nex|elvis|vile|editor|sensible-editor|(vi|vim|nvim|ex)\..+)$/;

/** git apply's options that only report on the patch (unless --apply comes too). */
const APPLY_REPORT = /^--(check|stat|numstat|summary)$/;

/**
 * Programs that write the paths a patch (or ed's commands) names: `patch` (not --dry-run), `ed`
 * (its `w` command; red too, in its folder), `git apply` (not --check/--stat/--numstat/--summary
 * alone) and `git am`, whatever global options come before the sub-command.
 */
function patches(prog: string, words: CommandWord[], t: string[]): boolean {
  if (prog === 'patch') return !long(t, ['--dry-run'], 4);
  if (prog === 'ed' || prog === 'red' || VI_LIKE.test(prog)) return !t.some((x) => /^(-V|--version|-h|--help)$/.test(x));
  if (prog !== 'git') return false;
  const call = gitCall(words);
  if (call.sub === null) return false;
  if (!words[call.at]!.literal) return true;
  const rest = words.slice(call.at + 1).map((w) => w.text);
  if (call.sub === 'am') return !rest.some((x) => /^(--show-current-patch.*|--abort|--quit)$/.test(x));
  return call.sub === 'apply' && (rest.includes('--apply') || !rest.some((x) => APPLY_REPORT.test(x)));
}

/**
 * An unpacked archive writes the paths it names (.git/config, a Makefile, a hard link to a
 * denied file): writes and links to paths known only when it runs — asked, and refused while
 * path rules hide files and no OS sandbox enforces them (as for reads of paths from a file).
 */
export function archiveWrites(prog: string, words: CommandWord[]): FileRef[] {
  if (!extracts(prog, words)) return [];
  const via = `${prog} (${VI_LIKE.test(prog) ? 'editing' : prog === 'patch' || prog === 'git' || prog === 'ed' || prog === 'red' ? 'applying a patch' : 'unpacking'})`;
  return [{ word: NAMED_INSIDE, access: 'write', via }, { word: NAMED_INSIDE, access: 'link', via }];
}
