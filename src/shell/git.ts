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
      return { sub: null, dirs, writes: false };
    }
    i++;
  }
  const subWord = words[i];
  if (!subWord) return { sub: null, dirs, writes: false };
  if (!subWord.literal) return { sub: subWord.text, dirs, writes: true };
  const sub = subWord.text;
  const rest = words.slice(i + 1).map((w) => w.text);
  if (READ_ONLY.has(sub)) return { sub, dirs, writes: false };
  const dep = DEPENDS[sub];
  return { sub, dirs, writes: dep ? dep(rest) : true };
}

/** Sub-commands that print file content from the object store, or write it out under other names. */
const CONTENT = new Set(['show', 'cat-file', 'archive', 'blame', 'annotate', 'grep', 'format-patch', 'range-diff', 'bundle', 'fast-export',
  'checkout-index', 'unpack-file', 'pack-objects', 'difftool', 'merge-file', 'clone', 'diff', 'log', 'whatchanged', 'diff-tree', 'diff-index',
  'diff-files', 'reflog', 'stash', 'worktree']);
/** Options that make a log/diff print content (a patch, a pickaxe search, a line log). */
const PATCH_FLAG = /^(-p|-u|--patch.*|-U\d*|--unified(=.*)?|--word-diff.*|--color-words.*|-[GS].*|--pickaxe-regex|-L.*|--cc|-c|-m|--diff-merges.*|--textconv|--find-object.*|-W|--function-context|--binary|--full-diff|--ext-diff)$/;
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
  const at = words.findIndex((w, i) => i > 0 && w.text === call.sub);
  // A changed work tree or git dir points checkout, reset & co at another folder: content lands there.
  const redirected = words.slice(1, at < 0 ? undefined : at).some((w) => /^--(work-tree|git-dir)(=|$)/.test(w.text));
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
  if (redirected || !LIMITED_BY_PATHS.has(sub) || dd < 0 || t.includes('--follow') || sub === 'grep' && t.some((x) => /^--(no-index|untracked)$/.test(x))) return { paths: null };
  const paths = rest.slice(dd + 1);
  if (paths.length === 0 || paths.some((w) => !w.literal || /[*?[\]]|^:/.test(w.text))) return { paths: null };
  return { paths };
}
