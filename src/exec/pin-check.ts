import { readFileSync } from 'node:fs';

/**
 * The check that a sandbox's read-write pins landed where they were asked to (review 31).
 *
 * bwrapArgs binds every folder above a hidden path onto itself, read-write (a mount point cannot
 * be moved, so the hidden path stays hidden). bwrap resolves those paths when it mounts, a moment
 * after bwrapArgs looked at them, following links: a process that swaps such a folder for a link
 * to a folder outside the workspace at that moment (a background command, renameat2 with
 * RENAME_EXCHANGE in a loop) gets the outside folder bound read-write into the sandbox. bubblewrap
 * 0.8 has no way to refuse links there, so the sandbox checks its own mount table before anything
 * of the command runs: each pin must be a mount at exactly its path, of the folder at that path
 * (same device, and the folder's path within its file system as seen from the mount above it).
 * Otherwise the command is not run (exit 125, with the reason on stderr).
 */

/** How the kernel writes a path in /proc/self/mountinfo: space, tab, newline and backslash as octal escapes. */
export function mountinfoPath(p: string): string {
  return p.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

/** Exit status of a command whose sandbox failed the check. */
export const PIN_CHECK_FAILED = 125;

/** The mount points of this process's mount table (the host's, for the server), decoded. */
export function mountPoints(): Set<string> {
  const out = new Set<string>();
  let text = '';
  try { text = readFileSync('/proc/self/mountinfo', 'utf8'); } catch { return out; }
  for (const line of text.split('\n')) {
    const mp = line.split(' ')[4];
    if (mp) out.add(mp.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
  }
  return out;
}

// bash builtins only, run inside the sandbox before anything of the command: reads the mount table
// (indexed by mount point), then for each path finds the deepest mount above it (the workspace's
// bind, a pin, a file system mounted inside the workspace; the top one of those stacked at that
// point) and asks for a mount at the path with that mount's device and the path continued from that
// mount's root — read-only for a read-only bind (R:). Linear in paths × depth (review 33: every path
// against every mount took 14 s for 600 nested .git folders). One line, a function with its own
// variables (removed after), so that it can open a command's own bash script without shifting its
// line numbers or leaving a name behind; `set -f` for the word splitting, undone.
const CHECK_FN = [
  '__tg_pc() { local -a P=(__ENTRIES__) L D R M O; local -A I; local n=0 l e f p b q rel want j ok',
  // mapfile reads the table in one go (`read` takes a /proc file a byte at a time: ~2 ms).
  'mapfile -t L < /proc/self/mountinfo; set -f',
  'for l in "${L[@]}"; do set -- $l; D[n]=$3; R[n]=$4; M[n]=$5; O[n]=$6; I[$5]+=" $n"; n=$((n+1)); done',
  'for e in "${P[@]}"; do f=${e%%:*}; p=${e#*:}; b=-1; q=$p',
  'while [[ $q != / ]]; do q=${q%/*}; [[ -z $q ]] && q=/; if [[ -n ${I[$q]-} ]]; then set -- ${I[$q]}; b=${!#}; break; fi; done',
  'ok=; if (( b >= 0 )); then rel=${p:${#q}}; [[ $q == / ]] && rel=$p; want=${R[b]%/}$rel',
  'for j in ${I[$p]-}; do [[ ${D[j]} == "${D[b]}" && ${R[j]} == "$want" && ( $f == P || ${O[j]} == ro* ) ]] && ok=1; done; fi',
  'if [ -z "$ok" ]; then echo "toolgate: the sandbox did not start as asked: $p is not bound onto itself$([ "$f" = R ] && echo \' read-only\') (was a folder swapped for a link while it started?); the command was not run. Run it again." >&2; set +f; return 1; fi',
  'done; set +f; }',
  `__tg_pc || exit ${PIN_CHECK_FAILED}; unset -f __tg_pc; `,
].join('; ').replace(/; do; /g, '; do ').replace(/; then; /g, '; then ');

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The check's bash text for these paths, to put before a script (one line, ending in "; "). */
export function pinCheckPrefix(pins: string[], readonly: string[]): string {
  const entries = [...pins.map((p) => `P:${mountinfoPath(p)}`), ...readonly.map((p) => `R:${mountinfoPath(p)}`)].map(quote).join(' ');
  return CHECK_FN.replace('__ENTRIES__', entries);
}

/**
 * The argv that checks the read-write pins and the read-only binds of paths onto themselves, then
 * runs `argv` (as it is when there is nothing to check). A command's own `bash -c SCRIPT` gets the
 * check in front of its script (no second bash: ~1.5 ms a command); any other argv is exec'd by a
 * bash that checks first.
 */
export function withPinCheck(pins: string[], readonly: string[], argv: string[]): string[] {
  if (pins.length + readonly.length === 0) return argv;
  const prefix = pinCheckPrefix(pins, readonly);
  if (argv.length === 5 && argv[0] === '/bin/bash' && argv[1] === '--norc' && argv[2] === '--noprofile' && argv[3] === '-c') {
    return [...argv.slice(0, 4), prefix + argv[4]!];
  }
  return ['/bin/bash', '--norc', '--noprofile', '-c', `${prefix}exec "$@"`, 'toolgate-pin-check', ...argv];
}
