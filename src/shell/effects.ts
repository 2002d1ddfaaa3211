import type { CommandWord } from '../core/types.js';
import { archiveWrites } from './extract.js';
import { gitCall, gitFiles, gitShowsContent } from './git.js';
import { PATTERN_OPTS, patternArgs } from './grep-args.js';
import { nameOperands } from './name-operands.js';
import { sedCall } from './sed.js';

export { runsCodeFromText } from './runs-code.js';

/** `search`: reads every file under a directory (grep -r, rg): only the OS sandbox hides the secrets in it. */
export type FileAccess = 'read' | 'list' | 'search' | 'write' | 'delete' | 'link' | 'walk' | 'history';
// `history`: committed content of every path under the word (git log -p, show, archive…); an empty word is the whole repository.
// `walk`: every name below a folder (find, du, tree, ls -R), no content.
// `link`: the target of `ln` — judged like a write (a link to a protected or denied path is refused), never a path target.

/** A path a command names, and what it does to it. */
export interface FileRef {
  word: CommandWord;
  access: FileAccess;
  /** Which command or redirect named it, for messages. */
  via: string;
}

const READERS = new Set(['cat', 'head', 'tail', 'less', 'more', 'wc', 'sort', 'uniq', 'cut', 'diff', 'cmp', 'strings', 'od', 'xxd',
  'hexdump', 'base64', 'md5sum', 'sha1sum', 'sha256sum', 'sha512sum', 'file', 'stat', 'nl', 'tac', 'bat', 'column', 'fold', 'paste', 'tr', 'source',
  // They print nothing of the content, but answer whether a path exists (an oracle on a denied folder).
  'realpath', 'readlink']);
/** `test`/`[` operators that look at a file: `-e F`, `A -nt B`. */
const FILE_TEST = /^-[bcdefghkprsuwxGLNOS]$/; // not -a: also "and"
const FILE_CMP = /^-(nt|ot|ef)$/;
/** Readers whose first operand is a pattern or program, not a file (unless -e/-f gives it). */
const PATTERN_FIRST = new Set(['grep', 'egrep', 'fgrep', 'rg', 'awk', 'gawk', 'mawk', 'nawk', 'sed', 'jq', 'yq']);
/** Readers that walk directories by default. */
const RECURSIVE = new Set(['rg']);
const GREPS = new Set(['grep', 'egrep', 'fgrep', 'rg']);
/** `-fFILE` attached to a short-option cluster (grep, awk, sed, jq…). */
const FILE_OPT = /^-[a-zA-Z]*f(.+)$/;
const LISTERS = new Set(['ls', 'tree', 'du', 'find', 'compgen']);
/** Programs that pack whole folders given as operands. */
const ARCHIVERS = new Set(['tar', 'zip', '7z', 'cpio']);

/** Folders and files an archiver reads: tar's operands (not the -f value), zip's after the archive name. */
function archiveInputs(prog: string, words: CommandWord[]): CommandWord[] {
  const out: CommandWord[] = [];
  let opts = true;
  for (let i = 1; i < words.length; i++) {
    const t = words[i]!.text;
    // After `--` every word is an input (`tar -cf - -- --exclude .env`).
    if (opts && t === '--' && words[i]!.literal) { opts = false; continue; }
    if (opts && prog === 'tar' && (t === '-f' || t === '--file' || t === '-C' || t === '--directory')) { i++; continue; }
    if (prog === 'tar' && i === 1 && !t.startsWith('-')) continue; // `tar cf …`: the old-style flag word
    if (opts && t.startsWith('-') && t !== '-') continue;
    out.push(words[i]!);
  }
  // `tar cf ARCHIVE dir…` (old style): the archive is the first operand.
  if (prog === 'tar' && words[1] && !words[1].text.startsWith('-') && /f/.test(words[1].text)) out.shift();
  if (prog === 'zip' || prog === '7z') out.shift();
  // Patterns of what to leave out (`--exclude .env`, zip's `-x .env`) are no inputs.
  const names = nameOperands(words[0], words);
  return out.filter((w) => !names.has(w));
}
const DELETERS = new Set(['rm', 'rmdir', 'unlink', 'shred']);
const TOUCHERS = new Set(['touch', 'mkdir', 'truncate', 'mkfifo', 'mknod']);

const operands = (words: CommandWord[]) => {
  const out: CommandWord[] = [];
  let opts = true;
  for (const w of words.slice(1)) {
    if (opts && w.literal && w.text === '--') { opts = false; continue; }
    if (opts && w.text.startsWith('-') && w.text !== '-') continue;
    out.push(w);
  }
  return out;
};

const hasOpt = (words: CommandWord[], re: RegExp) => words.slice(1).some((w) => re.test(w.text));

/**
 * Best effort (SPEC §5): files that well-known commands read, write or delete. The OS
 * sandbox is what enforces; this lets the path rules judge what can be seen in the text.
 */
export function fileEffects(prog: string, words: CommandWord[]): FileRef[] {
  const refs: FileRef[] = [];
  const add = (ws: CommandWord[], access: FileAccess) => { for (const w of ws) if (w.text !== '-') refs.push({ word: w, access, via: prog }); };
  // Patterns and names the program never opens (`--exclude .env`, grep's pattern): see nameOperands.
  const names = nameOperands(words[0], words);
  const ops = operands(words).filter((w) => !names.has(w));
  if (prog === 'test' || prog === '[') {
    const ws = words.slice(1);
    ws.forEach((w, i) => {
      if (FILE_TEST.test(w.text) && ws[i + 1]) add([ws[i + 1]!], 'list');
      if (FILE_CMP.test(w.text)) add([ws[i - 1], ws[i + 1]].filter((x): x is CommandWord => !!x), 'list');
    });
  }
  // cp -s / -l / --symbolic-link / --link makes links to its sources, as ln does.
  // (Any unambiguous prefix of a long option: `--l` is --link, `--sy` --symbolic-link.)
  const linker = prog === 'ln' || (prog === 'cp' && words.some((w) => /^-[A-Za-z]*[sl][A-Za-z]*$/.test(w.text) || /^--(l|sy)[a-z-]*$/.test(w.text)));
  // rsync --link-dest=DIR hard-links the destination's files to DIR's (relative: from the destination).
  if (prog === 'rsync') {
    words.forEach((w, i) => {
      const m = /^--link-d[a-z]*(?:=(.*))?$/.exec(w.text);
      const value = m ? (m[1] !== undefined ? { ...w, text: m[1] } : words[i + 1]) : undefined;
      if (!value) return;
      const dest = ops[ops.length - 1];
      add([value], 'link');
      if (value.literal && dest?.literal && !value.text.startsWith('/')) add([{ ...value, text: `${dest.text.replace(/\/+$/, '') || '.'}/${value.text}` }], 'link');
    });
  }
  if (prog === 'tee') add(ops, 'write');
  else if (prog === 'link') { add(ops.slice(0, 1), 'link'); add(ops.slice(1), 'write'); }
  else if (prog === 'cp' || prog === 'mv' || prog === 'ln' || prog === 'install' || prog === 'rsync') {
    const t = words.findIndex((w) => w.text === '-t' || w.text.startsWith('--target-directory'));
    if (t > 0) {
      const dest = words[t]!.text.includes('=') ? { ...words[t]!, text: words[t]!.text.split('=').slice(1).join('=') } : words[t + 1];
      if (dest) add([dest], 'write');
      add(ops.filter((w) => w !== dest), prog === 'mv' ? 'delete' : linker ? 'link' : 'read');
    } else if (ops.length > 0) {
      add(ops.slice(-1), prog === 'ln' && ops.length === 1 ? 'link' : 'write');
      add(ops.slice(0, -1), prog === 'mv' ? 'delete' : linker ? 'link' : 'read');
      // A symbolic link's relative target is read from the link's folder, not the cwd: `ln -s ../priv
      // sub/l` points at priv. Judged from both folders the link may land in (sub/, or sub/l/ if a folder).
      if (prog === 'ln' && ops.length > 1 && words.some((w) => /^(-[A-Za-z]*s[A-Za-z]*|--sy[a-z]*)$/.test(w.text))) {
        const dest = ops[ops.length - 1]!;
        const folders = [dest.text.replace(/\/+$/, ''), dest.text.includes('/') ? dest.text.slice(0, dest.text.replace(/\/+$/, '').lastIndexOf('/')) : '.'];
        for (const target of ops.slice(0, -1)) {
          if (target.text.startsWith('/') || !target.literal || !dest.literal) continue;
          add(folders.map((d) => ({ ...target, text: `${d || '.'}/${target.text}` })), 'link');
        }
      }
    }
  } else if (DELETERS.has(prog)) add(ops, 'delete');
  else if (TOUCHERS.has(prog)) add(ops, 'write');
  else if (prog === 'chmod' || prog === 'chown' || prog === 'chgrp') add(ops.slice(1), 'write');
  else if (prog === 'dd') {
    for (const w of words.slice(1)) {
      if (w.text.startsWith('of=')) add([{ ...w, text: w.text.slice(3) }], 'write');
      if (w.text.startsWith('if=')) add([{ ...w, text: w.text.slice(3) }], 'read');
    }
  } else if (prog === 'sed') {
    // Input files (rewritten with -i), and the files the script's r/R read and w/W write.
    const sed = sedCall(words);
    add(sed.inputs, sed.inPlace ? 'write' : 'read');
    add(sed.reads, 'read');
    add(sed.writes, 'write');
  } else if (prog === 'perl') {
    const inPlace = hasOpt(words, /^(-i.*|--in-place.*|-[a-zA-Z]*i[a-zA-Z]*)$/);
    const scriptGiven = hasOpt(words, /^(-e|-f|--expression.*|--file.*)$/);
    const files = inPlace ? ops.slice(scriptGiven ? 0 : 1) : [];
    add(files, inPlace ? 'write' : 'read');
  } else if (PATTERN_FIRST.has(prog)) {
    // grep and rg: -e/-f anywhere (options permute: `grep /etc/shadow -ve x`), read as nameOperands does.
    const g = PATTERN_OPTS[prog] ? patternArgs(words.slice(1), PATTERN_OPTS[prog]!) : null;
    // Unsure which operand is the pattern: every literal operand is read (a word known only when it runs may be `-e…`).
    const pattern = g ? (g.given || (g.unsure && g.first?.literal) ? null : g.first) : null;
    const scriptGiven = g ? !pattern : hasOpt(words, /^(-e|-f|--regexp.*|--file.*)$/) || hasOpt(words, /^-[a-zA-Z]*[ef].+$/);
    const files = g ? ops.filter((w) => w !== pattern && (g.unsure || !g.values.has(w))) : ops.slice(scriptGiven ? 0 : 1);
    const recursive = RECURSIVE.has(prog) || (GREPS.has(prog) && hasOpt(words, /^(-[a-zA-Z]*[rR][a-zA-Z]*|--recursive|--dereference-recursive|--directories=recurse)$/) || words.some((w, i) => /^(-d|--directories)$/.test(w.text) && words[i + 1]?.text === 'recurse'));
    if (recursive) add(files.length ? files : [{ text: '.', literal: true }], 'search');
    else add(files, 'read');
  } else if (READERS.has(prog)) add(ops, 'read');
  if (READERS.has(prog) || PATTERN_FIRST.has(prog)) {
    // Files named by an option value: grep --file=F / -fF, awk -fF, --exclude-from=F, dd-like forms.
    for (const w of words.slice(1)) {
      const t = w.text;
      const eq = t.indexOf('=');
      if (t.startsWith('--') && eq > 0 && /file|from/.test(t.slice(0, eq))) add([{ ...w, text: t.slice(eq + 1) }], 'read');
      else if (!t.startsWith('--') && FILE_OPT.test(t)) add([{ ...w, text: t.replace(FILE_OPT, '$1') }], 'read');
    }
  }
  else if (LISTERS.has(prog)) {
    // find, du, tree and ls -R walk the whole folder: a search (every name below it), not one listing.
    const deep = prog !== 'ls' || hasOpt(words, /^(-[a-zA-Z]*R[a-zA-Z]*|--recursive)$/);
    const starts = prog === 'find' ? findStarts(words) : ops.length ? ops : [{ text: '.', literal: true }];
    add(starts, deep ? 'walk' : 'list');
  }
  if (ARCHIVERS.has(prog)) add(archiveInputs(prog, words), 'search');
  refs.push(...archiveWrites(prog, words));
  // Options of otherwise read-only tools that write a file.
  const OUTPUT_OPTS: Record<string, RegExp> = {
    sort: /^(-o|--output)$/, less: /^(-o|-O|--log-file|--LOG-FILE)$/,
    curl: /^(-o|--output|-c|--cookie-jar|--trace|--trace-ascii|--dump-header|-D|--stderr)$/, wget: /^(-O|--output-document|-o|--output-file|-a|--append-output)$/,
    tar: /^(-f|--file)$/,
  };
  const outRe = OUTPUT_OPTS[prog];
  if (outRe) {
    for (let i = 1; i < words.length; i++) {
      const t = words[i]!.text;
      const eq = t.indexOf('=');
      if (t.startsWith('--') && eq > 0 && outRe.test(t.slice(0, eq))) add([{ ...words[i]!, text: t.slice(eq + 1) }], 'write');
      else if (outRe.test(t) && words[i + 1]) add([words[i + 1]!], 'write');
      else if (/^-[a-zA-Z]$/.test(t.slice(0, 2)) && t.length > 2 && !t.startsWith('--') && outRe.test(t.slice(0, 2))) add([{ ...words[i]!, text: t.slice(2) }], 'write');
    }
  }
  if ((prog === 'uniq' || prog === 'xxd') && ops.length >= 2) add([ops[1]!], 'write');
  if ((prog === 'split' || prog === 'csplit') && ops.length >= 2) add([ops[ops.length - 1]!], 'write');
  if (prog === 'git') refs.push(...gitEffects(words));
  if (prog === 'find') {
    for (let i = 1; i < words.length; i++) {
      const t = words[i]!.text;
      if (t === '-delete') add(findStarts(words), 'delete');
      if (/^-f(print0?|printf|ls)$/.test(t) && words[i + 1]) add([words[i + 1]!], 'write');
    }
  }
  return refs;
}

const join = (dir: CommandWord | undefined, rel: string): CommandWord =>
  (dir ? { text: `${dir.text.replace(/\/+$/, '')}/${rel}`, literal: dir.literal } : { text: rel, literal: true });

/**
 * git: the folder -C names is read (listed); `git config` writes the repository's .git/config
 * (or the file --file names, or ~/.gitconfig), `git init`/`clone` create one. Both are
 * protected (paths.protect), so these are refused by the path lists; `cd sub && git config`
 * is caught the same way, as relative paths are judged against every `cd` target.
 */
/** A raw object id, abbreviated or whole, with ancestry suffixes (`34fa5e7`, `34fa5e7~1^2`). */
const RAW_OBJECT = /^[0-9a-f]{7,64}([~^][0-9]*)*$/i;
/** Sub-commands whose operands are paths, messages or settings, never revisions. */
const NO_REVISIONS = new Set(['add', 'rm', 'mv', 'commit', 'config', 'init', 'clone', 'status', 'remote', 'help', 'version', 'credential', 'check-ignore', 'check-attr', 'ls-files', 'clean']);
/** Sub-commands that write trees, refs or the index from object ids. */
const ALWAYS_HISTORY = new Set(['read-tree', 'update-index', 'update-ref', 'mktree', 'fast-import', 'commit-tree', 'replace', 'unpack-file', 'checkout-index', 'hash-object', 'symbolic-ref']);
/** Sub-commands that show or copy committed content named by revisions. */
const REVISION_SUBS = new Set(['show', 'diff', 'log', 'whatchanged', 'grep', 'archive', 'restore', 'checkout', 'cat-file', 'blame', 'annotate',
  'format-patch', 'range-diff', 'ls-tree', 'read-tree', 'checkout-index', 'difftool', 'bundle', 'fast-export', 'stash', 'worktree', 'switch', 'reset', 'merge-file', 'diff-tree', 'diff-index']);

function gitEffects(words: CommandWord[]): FileRef[] {
  const call = gitCall(words);
  const refs: FileRef[] = call.dirs.map((d) => ({ word: d, access: 'list', via: 'git -C' }));
  const dir = call.dirs[call.dirs.length - 1];
  const rest = words.slice(words.findIndex((w) => w.text === call.sub) + 1);
  if (call.sub === 'config' && call.writes) {
    const fi = rest.findIndex((w) => w.text === '-f' || w.text === '--file' || w.text.startsWith('--file='));
    if (fi >= 0) {
      const w = rest[fi]!;
      const f = w.text.startsWith('--file=') ? { ...w, text: w.text.slice(7) } : rest[fi + 1];
      if (f) refs.push({ word: f, access: 'write', via: 'git config --file' });
    } else if (rest.some((w) => w.text === '--global')) refs.push({ word: { text: '~/.gitconfig', literal: false }, access: 'write', via: 'git config --global' });
    else if (rest.some((w) => w.text === '--system')) refs.push({ word: { text: '/etc/gitconfig', literal: true }, access: 'write', via: 'git config --system' });
    else refs.push({ word: join(dir, '.git/config'), access: 'write', via: 'git config' });
  }
  const content = gitShowsContent(words);
  if (content) {
    const base = (w: CommandWord): CommandWord => (dir && !w.text.startsWith('/') ? join(dir, w.text) : w);
    if (content.paths) for (const p of content.paths) refs.push({ word: base(p), access: 'history', via: `git ${call.sub}` });
    else refs.push({ word: { text: '', literal: true }, access: 'history', via: `git ${call.sub ?? ''}`.trim() });
  }
  // Under path rules, `-- <paths>` is judged from the repository's root; a revision that is a raw
  // object id (or `X^{tree}`) may name a folder's tree, to which the paths are relative (`git diff
  // <empty tree> <tree of priv> -- secret.txt`), and `restore --source`/`checkout <id> --` copy it
  // out: the whole history is judged (refused while rules deny paths to commands).
  const end = rest.findIndex((w) => w.text === '--');
  const sources: CommandWord[] = [];
  const named = REVISION_SUBS.has(call.sub ?? '');
  const revs = NO_REVISIONS.has(call.sub ?? '') ? [] : (end < 0 ? rest : rest.slice(0, end)).flatMap((w) => {
    const src = /^(--source=|-s)(.+)$/.exec(w.text);
    if (src && named) sources.push({ ...w, text: src[2]! });
    return w.text.startsWith('-') ? [] : [w];
  });
  const srcAt = rest.findIndex((w) => w.text === '--source' || w.text === '-s');
  if (srcAt >= 0 && rest[srcAt + 1] && (call.sub === 'restore' || call.sub === 'checkout')) sources.push(rest[srcAt + 1]!);
  // Every sub-command that takes revisions: a raw id can also become a ref (`git tag t <tree>`,
  // `update-ref`, `fetch . <id>:refs/heads/x`) that later reads pass as a name.
  const rawId = (t: string) => t.split(/[:.^~@{}+]/).some((piece) => RAW_OBJECT.test(piece)) || /\^\{/.test(t);
  // Sub-commands that build trees, refs or the index from ids they read (stdin, --index-info, a
  // substitution): judged as the whole history too (`read-tree --prefix=sub/ HEAD`, `update-ref --stdin`).
  if (ALWAYS_HISTORY.has(call.sub ?? '') || [...revs, ...sources].some((w) => !w.literal || rawId(w.text))) {
    refs.push({ word: { text: '', literal: true }, access: 'history', via: `git ${call.sub ?? ''} with an object id`.trim() });
  }
  // `--source=REV:path` copies that committed path out: judged like REV:path below.
  for (const w of sources) {
    const m = /^[^:\s]*:(?!\/\/)(.+)$/.exec(w.text);
    if (m && m[1]) refs.push({ word: { text: m[1].replace(/^\.\//, ''), literal: w.literal }, access: 'read', via: `git ${call.sub ?? ''} --source ${w.text.split(':')[0]}:`.trim() });
  }
  // `REV:path` names a committed file: the secrets list judges the path (`git show HEAD:.env`).
  for (const w0 of rest) {
    // In an option's value too (`--reuse-message=HEAD:priv/x`, `--blob=…`), and the index forms `:path`, `:0:path`.
    const w = w0.text.startsWith('-') ? { ...w0, text: w0.text.includes('=') ? w0.text.slice(w0.text.indexOf('=') + 1) : '' } : w0;
    const m = /^(?::[0-3]:|[^:\s]*:)(?!\/\/)(.+)$/.exec(w.text);
    if (m && m[1]) refs.push({ word: { text: m[1].replace(/^\.\//, ''), literal: w.literal }, access: 'read', via: `git ${call.sub ?? ''} ${w.text.split(':')[0]}:`.trim() });
  }
  // Files named by options (--output=F, archive -o F, --add-file=F, grep -f F…) and both sides of diff --no-index.
  for (const f of gitFiles(words)) if (f.word.text !== '-') refs.push({ ...f, word: base0(dir, f.word) });
  // git mv / git rm move and delete working-tree files like mv and rm.
  if (call.sub === 'mv' || call.sub === 'rm') {
    const ops = rest.filter((w) => !w.text.startsWith('-'));
    if (call.sub === 'mv' && ops.length >= 2) {
      refs.push({ word: base0(dir, ops[ops.length - 1]!), access: 'write', via: 'git mv' });
      for (const o of ops.slice(0, -1)) refs.push({ word: base0(dir, o), access: 'delete', via: 'git mv' });
    } else if (call.sub === 'rm') for (const o of ops) refs.push({ word: base0(dir, o), access: 'delete', via: 'git rm' });
  }
  if (call.sub === 'init' || call.sub === 'clone') {
    const ops = rest.filter((w) => !w.text.startsWith('-'));
    const target = call.sub === 'init' ? ops[0] : ops[1] ?? (ops[0] ? { text: ops[0].text.replace(/\.git$/, '').split(/[/:]/).pop() ?? 'x', literal: ops[0].literal } : undefined);
    const base = target ? (dir && !target.text.startsWith('/') ? join(dir, target.text) : target) : dir;
    refs.push({ word: join(base, '.git/config'), access: 'write', via: `git ${call.sub}` });
  }
  return refs;
}

const base0 = (dir: CommandWord | undefined, w: CommandWord): CommandWord => (dir && !w.text.startsWith('/') ? join(dir, w.text) : w);

/** find's starting points: the words before the first test or action (default "."). */
export function findStarts(words: CommandWord[]): CommandWord[] {
  const out: CommandWord[] = [];
  for (const w of words.slice(1)) {
    if (/^[-(!]/.test(w.text) && w.text !== '-') break;
    out.push(w);
  }
  return out.length ? out : [{ text: '.', literal: true }];
}
