import type { CommandWord } from '../core/types.js';

/** git's global options that take a value as the next word. */
const GLOBAL_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--exec-path', '--super-prefix', '--list-cmds', '--attr-source']);

/** Sub-commands that only look at the repository. */
const READ_ONLY = new Set([
  'status', 'log', 'diff', 'show', 'blame', 'annotate', 'grep', 'ls-files', 'ls-tree', 'ls-remote', 'rev-parse', 'rev-list',
  'describe', 'shortlog', 'cat-file', 'for-each-ref', 'show-ref', 'show-branch', 'name-rev', 'merge-base', 'range-diff',
  'whatchanged', 'count-objects', 'fsck', 'verify-commit', 'verify-tag', 'check-ignore', 'check-attr', 'check-ref-format',
  'diff-tree', 'diff-files', 'diff-index', 'var', 'version', 'help', 'cherry', 'archive', 'format-patch', 'bugreport',
]);

/** Sub-commands that read or write depending on their words: true when these words write. */
const DEPENDS: Record<string, (rest: string[]) => boolean> = {
  // `git branch` lists; with a name, -d/-D/-m/-c/--delete… it changes refs.
  branch: (r) => r.some((w) => /^(-[dDmMcCuf]|--(delete|move|copy|force|set-upstream-to|unset-upstream|edit-description|track|no-track))/.test(w) || !w.startsWith('-')) && !r.some((w) => /^(-l|--list|-a|--all|-r|--remotes|--show-current|--contains|--merged|--no-merged|--points-at)$/.test(w)),
  tag: (r) => r.some((w) => /^(-[adsfu]|--(annotate|delete|sign|force|message|file))/.test(w) || !w.startsWith('-')) && !r.some((w) => /^(-l|--list|-v|--verify|--contains|--points-at|--merged|--no-merged)$/.test(w)),
  config: (r) => !r.some((w) => /^(-l|--list|--get|--get-all|--get-regexp|--get-urlmatch|--get-color|--get-colorbool|--show-origin|--show-scope|get|list)$/.test(w)),
  stash: (r) => !(r[0] === 'list' || r[0] === 'show'),
  remote: (r) => r.length > 0 && !/^(-v|--verbose|show|get-url)$/.test(r[0]!),
  reflog: (r) => r[0] === 'expire' || r[0] === 'delete',
  worktree: (r) => r[0] !== 'list',
  submodule: (r) => r.length > 0 && r[0] !== 'status' && r[0] !== 'summary' && r[0] !== 'foreach',
  notes: (r) => r.length > 0 && !/^(list|show)$/.test(r[0]!),
  bisect: (r) => !(r[0] === 'log' || r[0] === 'view' || r[0] === 'visualize'),
  'symbolic-ref': (r) => r.filter((w) => !w.startsWith('-')).length >= 2 || r.some((w) => w === '-d' || w === '--delete'),
  'sparse-checkout': (r) => r[0] !== 'list',
  lfs: (r) => !/^(ls-files|status|env|version|track)$/.test(r[0] ?? '') || (r[0] === 'track' && r.length > 1),
};

export interface GitCall {
  /** The sub-command (after global options), or null for `git --version` and the like. */
  sub: string | null;
  /** Directories given with -C, in order (each relative to the previous one). */
  dirs: CommandWord[];
  /** True when the call changes the repository, its refs, config or remotes: it needs git.write. */
  writes: boolean;
  /** Index of the sub-command in the words (words.length when there is none). */
  at: number;
}

/**
 * Reads a git argv: global options, the sub-command, and whether it writes. An unknown
 * sub-command (an alias, a plugin `git-foo`) counts as a write: it can be anything.
 */
export function gitCall(words: CommandWord[]): GitCall {
  const dirs: CommandWord[] = [];
  let i = 1;
  while (i < words.length) {
    const t = words[i]!.text;
    if (!t.startsWith('-')) break;
    if (GLOBAL_WITH_VALUE.has(t)) {
      if (t === '-C' && words[i + 1]) dirs.push(words[i + 1]!);
      i += 2;
      continue;
    }
    if (t === '--version' || t === '--help' || t === '-h' || t === '--html-path' || t === '--man-path' || t === '--info-path') {
      return { sub: null, dirs, writes: false, at: words.length };
    }
    i++;
  }
  const subWord = words[i];
  if (!subWord) return { sub: null, dirs, writes: false, at: words.length };
  if (!subWord.literal) return { sub: subWord.text, dirs, writes: true, at: i };
  const sub = subWord.text;
  const rest = words.slice(i + 1).map((w) => w.text);
  if (READ_ONLY.has(sub)) return { sub, dirs, writes: false, at: i };
  const dep = DEPENDS[sub];
  return { sub, dirs, writes: dep ? dep(rest) : true, at: i };
}

/** Sub-commands that print file content from the object store, or write it out under other names. */
const CONTENT = new Set(['show', 'cat-file', 'archive', 'blame', 'annotate', 'grep', 'format-patch', 'range-diff', 'bundle', 'fast-export',
  'checkout-index', 'unpack-file', 'pack-objects', 'difftool', 'merge-file', 'clone', 'diff', 'log', 'whatchanged', 'diff-tree', 'diff-index',
  'diff-files', 'reflog', 'stash', 'worktree']);
/** Options that make a log/diff print content (a patch, a pickaxe search, a line log). */
const PATCH_FLAG = /^(-p|-u|--patch.*|-U\d*|--unified(=.*)?|--word-diff.*|--color-words.*|-[GS].*|--pickaxe-regex|-L.*|--cc|-c|-m|--diff-merges.*|--textconv|--find-object.*|-W|--function-context|--binary|--ext-diff)$/;
/** Options that limit a diff to names and counts. */
const NAMES_ONLY = /^(--stat.*|--name-only|--name-status|--numstat|--shortstat|--quiet|--raw|-s|--no-patch|--dirstat.*|--summary|--compact-summary|--exit-code)$/;
/** Sub-commands whose output `-- <paths>` limits to those paths (a blob id there is refused by git). */
const LIMITED_BY_PATHS = new Set(['log', 'whatchanged', 'diff', 'diff-tree', 'diff-index', 'diff-files', 'blame', 'annotate', 'grep', 'format-patch']);

/**
 * Whether a git call shows committed file content (the object store holds copies of every
 * committed path, denied ones included, and no sandbox mask reaches inside it). null: it does
 * not; `paths` null: content of any path; otherwise only of these pathspecs (after `--`).
 */
export function gitShowsContent(words: CommandWord[]): { paths: CommandWord[] | null } | null {
  const call = gitCall(words);
  const at = call.sub === null ? -1 : call.at;
  // A changed work tree or git dir points checkout, reset & co at another folder: content lands there.
  const redirected = words.slice(1, at < 0 ? undefined : at).some((w) => /^--(work-tree|git-dir)(=|$)/.test(w.text));
  // `--icase-pathspecs` (`-- PRIV` matches priv), `--glob-pathspecs`: pathspecs mean more than they say.
  const anyPath = words.slice(1, at < 0 ? undefined : at).some((w) => /^--(icase|glob)-pathspecs$/.test(w.text));
  if (!call.sub) return null;
  if (!words[at]?.literal) return { paths: null };
  const rest = words.slice(at + 1);
  const t = rest.map((w) => w.text);
  const sub = call.sub;
  let shows = redirected || CONTENT.has(sub);
  if (sub === 'diff' && t.includes('--no-index')) return null; // compares two files: their paths are judged as reads
  if (sub === 'log' || sub === 'whatchanged' || sub === 'reflog' || sub === 'diff-tree' || sub === 'diff-index' || sub === 'diff-files') shows = t.some((x) => PATCH_FLAG.test(x));
  if (sub === 'diff') shows = !t.some((x) => NAMES_ONLY.test(x)) || t.some((x) => PATCH_FLAG.test(x));
  if (sub === 'stash') shows = t[0] === 'show' && t.some((x) => PATCH_FLAG.test(x));
  if (sub === 'worktree') shows = t[0] === 'add';
  if (redirected) shows = true;
  if (!shows) return null;
  const dd = t.indexOf('--');
  // --follow follows renames out of the paths; --full-diff prints every file of a commit the paths
  // select (format-patch always prints patches; log and the like with a patch flag).
  if (redirected || anyPath || !LIMITED_BY_PATHS.has(sub) || dd < 0 || t.includes('--follow') || t.includes('--full-diff') || sub === 'grep' && t.some((x) => /^--(no-index|untracked)$/.test(x))) return { paths: null };
  const paths = rest.slice(dd + 1);
  if (paths.length === 0 || paths.some((w) => !w.literal || /[*?[\]]|^:/.test(w.text))) return { paths: null };
  return { paths };
}

/**
 * Long options that make git run a program or command line named in the words, or put files where
 * the path rules do not look. git's parse-options takes any unambiguous prefix of a long option
 * (`--upload-pa=CMD` is --upload-pack), so a word whose name is a prefix of one of these counts as it.
 * - upload-pack, receive-pack, exec (ls-remote, fetch, pull, clone, push, archive --remote, fetch-pack,
 *   send-pack; rebase --exec): the program run as the other end, or a command line to run;
 * - exec-path, config-env: where git finds its programs, config (core.pager, aliases…) from the environment;
 * - open-files-in-pager (grep -O): runs its value as the pager; ext-diff: runs the configured diff driver;
 * - extcmd (difftool -x): a command; template (init, clone): copies hooks from a folder, clone runs them;
 * - separate-git-dir (init, clone): writes the repository to another folder.
 * --textconv and the like run drivers the configuration names: judged with the config, not here.
 */
const RUNS_LONG = ['upload-pack', 'receive-pack', 'exec', 'exec-path', 'config-env', 'open-files-in-pager', 'ext-diff'];
const RUNS_LONG_SUB: Record<string, string[]> = {
  clone: ['config', 'template', 'separate-git-dir'], // also clone -c/--config core.hooksPath=… / core.fsmonitor=…
  init: ['template', 'separate-git-dir'],
  difftool: ['extcmd'],
  'send-email': ['sendmail-cmd', 'to-cmd', 'cc-cmd', 'header-cmd', 'smtp-server'],
};
/** Short options that run a command, per sub-command, and the short options there that take a value (the rest of a cluster). */
const RUNS_SHORT: Record<string, { runs: string; args: string }> = {
  grep: { runs: 'O', args: 'efABCm' }, // -O[PAGER]: its value attached
  clone: { runs: 'uc', args: 'ojb' }, // -u UPLOAD-PACK, -c KEY=VALUE
  'ls-remote': { runs: 'u', args: 'o' },
  rebase: { runs: 'x', args: 'sXC' }, // -x CMD
  difftool: { runs: 'x', args: 't' }, // -x CMD
};

/** Words of a git call before `--`, after the sub-command (options may follow operands). */
const optionWords = (words: CommandWord[], at: number) => {
  const rest = words.slice(at + 1);
  const dd = rest.findIndex((w) => w.literal && w.text === '--');
  return dd < 0 ? rest : rest.slice(0, dd);
};

/** Why the words make git run a command (or write a folder's worth of files unseen), or null. */
export function gitRunsCode(words: CommandWord[]): string | null {
  const call = gitCall(words);
  const why = 'this git option can run a command';
  // Global options: config from the command line or the environment, another exec path.
  for (let i = 1; i < call.at; i++) {
    const w = words[i]!;
    if (!w.literal) return 'a git option known only when it runs';
    if (/^(-c|--config-env|--exec-path)(=|$)/.test(w.text)) return why;
    if (GLOBAL_WITH_VALUE.has(w.text)) i++; // its value (`-C "$dir"`)
  }
  if (call.sub === null) return null;
  if (!words[call.at]!.literal) return 'the git sub-command is known only when it runs';
  const sub = call.sub;
  const rest = words.slice(call.at + 1);
  if (sub === 'filter-branch') return 'git filter-branch runs its filters as shell code';
  if (sub === 'bisect' && rest[0]?.text === 'run') return 'git bisect run runs a command';
  if (sub === 'submodule' && rest.some((w) => w.text === 'foreach')) return 'git submodule foreach runs a command';
  const long = [...RUNS_LONG, ...(RUNS_LONG_SUB[sub] ?? [])];
  const short = RUNS_SHORT[sub];
  for (const w of optionWords(words, call.at)) {
    const t = w.text;
    // A word known only when it runs is judged by what is written of it: `--author="$me"` by its
    // name, `-m"$msg"` by its letters up to the value; `--$x`, `-n$x` could be any option.
    const unknown = (part: string) => !w.literal && /[$`*?[\]{}~\\'"]/.test(part);
    if (t.startsWith('--')) {
      const name = t.slice(2).split('=')[0]!;
      if (unknown(name)) return 'a git option known only when it runs';
      if (name !== '' && !name.startsWith('no-') && long.some((l) => l.startsWith(name))) return why;
    } else if (/^-[^-]/.test(t)) {
      for (const c of t.slice(1)) {
        if (unknown(c)) return 'a git option known only when it runs';
        if (short?.runs.includes(c)) return why;
        if (!short || short.args.includes(c)) break;
      }
    }
  }
  return null;
}

/** Options naming a file git reads or writes: long names (any prefix of two letters or more) and short letters. */
interface FileOpt { long: string[]; short?: string; access: 'read' | 'write' }
/** Other short options taking a value there: the rest of a cluster is that value (`commit -mFix`). */
const SHORT_ARGS: Record<string, string> = { grep: 'eABCmO', commit: 'mcCS', tag: 'mu', merge: 'msX', notes: 'mcC', 'format-patch': 'vS', bugreport: 's' };
const FILE_OPTS: Record<string, FileOpt[]> = {
  '*': [{ long: ['output', 'output-directory'], access: 'write' }], // diff/log/show --output=FILE, format-patch, bugreport, archive
  archive: [{ long: [], short: 'o', access: 'write' }, { long: ['add-file'], access: 'read' }],
  'format-patch': [{ long: [], short: 'o', access: 'write' }],
  bugreport: [{ long: [], short: 'o', access: 'write' }],
  grep: [{ long: [], short: 'f', access: 'read' }],
  blame: [{ long: ['contents'], access: 'read' }],
  commit: [{ long: ['file', 'template'], short: 'Ft', access: 'read' }],
  tag: [{ long: ['file'], short: 'F', access: 'read' }],
  merge: [{ long: ['file'], short: 'F', access: 'read' }],
  notes: [{ long: ['file'], short: 'F', access: 'read' }],
};

/**
 * Files a git call names in its options (`--output=F`, `archive -o F`, `--add-file=F`, `grep -f F`,
 * `commit -F F`…) and the two paths `git diff --no-index A B` compares. Relative to the last -C folder.
 */
export function gitFiles(words: CommandWord[]): { word: CommandWord; access: 'read' | 'write'; via: string }[] {
  const call = gitCall(words);
  if (call.sub === null || !words[call.at]!.literal) return [];
  const out: { word: CommandWord; access: 'read' | 'write'; via: string }[] = [];
  const via = `git ${call.sub}`;
  const opts = [...FILE_OPTS['*']!, ...(FILE_OPTS[call.sub] ?? [])];
  const ws = optionWords(words, call.at);
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i]!;
    const t = w.text;
    if (t.startsWith('--')) {
      const eq = t.indexOf('=');
      const name = t.slice(2, eq < 0 ? undefined : eq);
      const o = name.length >= 2 ? opts.find((x) => x.long.some((l) => l.startsWith(name))) : undefined;
      if (!o) continue;
      const value = eq >= 0 ? { ...w, text: t.slice(eq + 1) } : ws[++i];
      if (value) out.push({ word: value, access: o.access, via });
    } else if (/^-[^-]/.test(t)) {
      for (let k = 1; k < t.length; k++) {
        const o = opts.find((x) => x.short?.includes(t[k]!));
        if (!o && SHORT_ARGS[call.sub]?.includes(t[k]!)) break;
        if (!o) continue;
        const value = k + 1 < t.length ? { ...w, text: t.slice(k + 1) } : ws[++i];
        if (value) out.push({ word: value, access: o.access, via });
        break;
      }
    }
  }
  if (call.sub === 'diff' && words.slice(call.at + 1).some((w) => w.text === '--no-index')) {
    // Two files (or folders) outside git's view, compared and printed: both are read.
    for (const w of words.slice(call.at + 1)) if (!(w.literal && w.text.startsWith('-'))) out.push({ word: w, access: 'read', via: 'git diff --no-index' });
  }
  return out;
}
