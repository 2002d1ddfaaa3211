import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Envelope } from '../../src/core/envelope.js';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

/**
 * Independent attack review of issue 8 §3 (rules hold in commands), after command-rules.test.ts
 * and the bypass suites: a committed git repository (the object store holds copies of denied
 * files), moving/linking a folder that holds a denied one, ask rules under bubblewrap, and
 * process_write into a background shell. Each row must be refused or see nothing; controls work.
 */

const hasBwrap = (await detectBwrap()) !== null;
const hasPython = spawnSync('python3', ['-c', '0']).status === 0;
const hasGit = spawnSync('git', ['--version']).status === 0;

/** Content that no output may show: denied (priv, a/b/hidden), a secret (.env), asked (ask/). */
const DENIED = ['PRIV_X_1', 'PRIV_Y_2', 'HIDDEN_Z_3', 'ENV_SECRET_4'];
const ASKED = 'ASK_Q_5';

function fixture(dir: string): void {
  const w = (rel: string, text: string) => { mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true }); writeFileSync(path.join(dir, rel), text); };
  w('priv/x', 'PRIV_X_1\n');
  w('priv/d/y', 'PRIV_Y_2\n');
  w('priv/never-named-9', 'PRIV_X_1\n');
  w('a/b/hidden/z', 'HIDDEN_Z_3\n');
  w('a/b/visible', 'VISIBLE_OK\n');
  w('.env', 'ENV_SECRET_4\n');
  w('ask/q', 'ASK_Q_5\n');
  w('pub/a', 'PUBLIC_OK\n');
  w('sub/.git/config', '[core]\n\tbare = false\n');
  w('sub/file', 'SUB_OK\n');
  if (!hasGit) return;
  const git = (...a: string[]) => spawnSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...a], { cwd: dir });
  git('init', '-q');
  git('add', '-A', '-f', '.');
  git('commit', '-qm', 'all of it, denied files included');
}

const policyYaml = (backend: string) => `mode: ci
sandbox: { backend: ${backend} }
commands: { prefer_tools: false }
rules:
  - { tool: "*", path: "priv/**", decision: deny }
  - { tool: "*", path: "a/b/hidden/**", decision: deny }
  - { tool: "*", path: "ask/**", decision: ask }
  - { tool: "*", decision: allow }
`;

/** One attack: commands run in turn (a later one reads what an earlier one moved); none may show the markers. */
interface Row { run: string[]; only?: 'bwrap' | 'none'; needs?: 'python' | 'git'; todo?: string }

const CONTENT_ATTACKS: Row[] = [
  // The object store: every committed path, denied and secret ones included, behind one git call.
  { run: ['git show HEAD:priv/x'], needs: 'git' },
  { run: ['git show HEAD:.env'], needs: 'git' },
  { run: ['git cat-file -p HEAD:priv/x'], needs: 'git' },
  { run: ['git log -p'], needs: 'git' },
  { run: ['git log -p -- .'], needs: 'git' },
  { run: ['git log -p -- a'], needs: 'git' },
  { run: ['git log -p --follow -- pub/a'], needs: 'git' },
  { run: ['git log -SPRIV -p'], needs: 'git' },
  { run: ['git whatchanged -p'], needs: 'git' },
  { run: ['git show'], needs: 'git' },
  { run: ['git show HEAD --stat', 'git show $(git rev-parse HEAD:priv/x)'], needs: 'git' },
  { run: ['git diff'], needs: 'git' },
  { run: ['git diff HEAD'], needs: 'git' },
  { run: ['git diff 4b825dc642cb6eb9a060e54bf8d69288fbee4904 HEAD'], needs: 'git' },
  { run: ['git --work-tree=pub diff'], needs: 'git' },
  { run: ['GIT_DIR=.git git show HEAD:priv/x'], needs: 'git' },
  { run: ['git archive HEAD | tar xOf -'], needs: 'git' },
  { run: ['git archive -o pub/all.tar HEAD', 'tar xOf pub/all.tar'], needs: 'git' },
  { run: ['git grep -h PRIV HEAD'], needs: 'git' },
  { run: ['git grep --cached -h _'], needs: 'git' },
  { run: ['git blame priv/x'], needs: 'git' },
  { run: ['git format-patch --stdout -1'], needs: 'git' },
  { run: ['git checkout-index -a --prefix=pub/co/', 'cat pub/co/priv/x pub/co/a/b/hidden/z'], needs: 'git' },
  { run: ['git worktree add -q pub/wt', 'cat pub/wt/priv/x'], needs: 'git' },
  { run: ['git clone -q . pub/cl', 'cat pub/cl/priv/x'], needs: 'git' },
  { run: ['GIT_INDEX_FILE=/tmp/i GIT_WORK_TREE=pub git checkout HEAD -- .', 'cat pub/priv/x'], needs: 'git' },
  { run: ['export GIT_WORK_TREE=pub; git checkout HEAD -- .', 'cat pub/priv/x'], needs: 'git' },
  { run: ['env GIT_INDEX_FILE=/tmp/i GIT_WORK_TREE=pub git reset -q --hard', 'cat pub/priv/x'], needs: 'git' },
  { run: ['python3 -c "import subprocess; subprocess.run([\'git\', \'show\', \'HEAD:priv/x\'])"'], only: 'bwrap', needs: 'python',
    todo: 'git run by a script (python subprocess, make, an npm script) reads the object store, which the sandbox does not mask (masking .git/objects would break git); only git named in the command line is judged' },
  { run: ['git -C pub log -p'], needs: 'git' },
  { run: ['cd pub && git log -p'], needs: 'git' },
  { run: ['bash -c "git log -p"'], needs: 'git' },
  { run: ['git mv priv/x pub/moved', 'cat pub/moved'], needs: 'git' },
  { run: ['git mv a pub/a2', 'cat pub/a2/b/hidden/z'], needs: 'git' },
  // Moving, deleting or linking a folder that holds a denied one carries it out from under the rule.
  { run: ['mv a b2', 'cat b2/b/hidden/z'] },
  { run: ['mv a/b a/c', 'cat a/c/hidden/z'] },
  { run: ['ln -s a l1 && cat l1/b/hidden/z'] },
  { run: ['ln -s a l2', 'cat l2/b/hidden/z'] },
  { run: ['ln -s . l3 && cat l3/priv/x'] },
  { run: ['cp -al a pub/hl', 'cat pub/hl/b/hidden/z'] },
  { run: ['python3 -c "import os; os.rename(\'a\', \'b4\')"', 'cat b4/b/hidden/z'], only: 'bwrap', needs: 'python' },
  { run: ['node -e "require(\'fs\').renameSync(\'a/b\', \'a/c5\')"', 'cat a/c5/hidden/z'], only: 'bwrap' },
  { run: ['python3 -c "import shutil; shutil.move(\'a\', \'b6\')"', 'cat b6/b/hidden/z'], only: 'bwrap', needs: 'python' },
];

/** An ask rule's paths, read without naming them: each must ask, be refused or see nothing. */
const ASK_ATTACKS: Row[] = [
  { run: ['cat as?/q'] },
  { run: ['cat $(echo ask)/q'] },
  { run: ['grep -r ASK_Q .'], only: 'bwrap' },
  { run: ['tar cf - . | tar xOf - ./ask/q'], only: 'bwrap' },
  { run: ['python3 -c "print(open(\'ask/q\').read())"'], only: 'bwrap', needs: 'python' },
  { run: ['node -e "console.log(require(\'fs\').readFileSync(\'ask/q\',\'utf8\'))"'], only: 'bwrap' },
  { run: ['cp -r . /tmp/c && cat /tmp/c/ask/q'], only: 'bwrap' },
  { run: ['git show HEAD:ask/q'], needs: 'git' },
  { run: ['git log -p -- ask'], needs: 'git' },
];

/**
 * Existence oracles: the same command on an existing and a missing path under a denied folder
 * must give the same answer (code, output with the path replaced). `{P}` is the path.
 */
const ORACLES: Array<{ t: string; todo?: string; needs?: 'git' }> = [
  { t: 'test -e {P} && echo Y' },
  { t: '[ -e {P} ] && echo Y' },
  { t: '[[ -f {P} ]] && echo Y' },
  { t: 'if [ -s {P} ]; then echo Y; fi' },
  { t: '[ {P} -nt pub/a ] && echo Y' },
  { t: 'realpath -e {P}' },
  { t: 'readlink -e {P}' },
  { t: 'stat -c %s {P}' },
  { t: 'ls -d {P}' },
  { t: 'cat {P}' },
  { t: 'wc -c < {P}' },
  { t: 'cd {P}' },
  { t: 'du {P}' },
  { t: 'find {P}' },
  { t: 'cp {P} pub/copy' },
  { t: 'mv {P} priv/elsewhere' },
  { t: 'git log --oneline -- {P}', needs: 'git', todo: 'names in history: git log/ls-files/status without content are allowed under deny rules; only content (patches, blobs) is refused' },
  { t: 'git ls-files --error-unmatch {P}', needs: 'git', todo: 'names in history: git log/ls-files/status without content are allowed under deny rules; only content (patches, blobs) is refused' },
];

/** Listings whose output must not name what is inside a denied folder. */
const NAME_ATTACKS: Row[] = [
  { run: ['echo priv/*'] },
  { run: ['printf "%s\\n" priv/* priv/.*'] },
  { run: ['for f in priv/*; do echo "$f"; done'] },
  { run: ['shopt -s nullglob; a=(priv/*); echo "${a[@]}"'] },
  { run: ['echo */never*'] },
  { run: ['echo pr*/nev*'] },
  { run: ['compgen -f priv/'] },
  { run: ['git ls-files'], needs: 'git', todo: 'names in history: git ls-files/log --stat/status list committed denied names; refusing them whenever a deny rule exists would refuse git status' },
];

const CONTROLS: Array<{ command: string; expect?: RegExp; needs?: 'git' }> = [
  { command: 'cat pub/a', expect: /PUBLIC_OK/ },
  { command: 'git log --oneline', expect: /all of it/, needs: 'git' },
  { command: 'git log -p -- pub', expect: /PUBLIC_OK/, needs: 'git' },
  { command: 'git diff --stat', needs: 'git' },
  { command: 'git status --short', needs: 'git' },
  { command: 'git diff HEAD -- pub sub', needs: 'git' },
  { command: 'mv pub pub2 && mv pub2 pub && cat pub/a', expect: /PUBLIC_OK/ },
  { command: 'echo made > a/b/new && mv a/b/new pub/new && cat pub/new', expect: /made/ },
  { command: 'ln -s pub lp && cat lp/a && rm lp', expect: /PUBLIC_OK/ },
  { command: 'mkdir -p pub/t && rm -r pub/t' },
  { command: '[ -f pub/a ] && echo yes', expect: /yes/ },
  { command: 'for f in pub/*; do echo "$f"; done', expect: /pub\/a/ },
  { command: 'echo pub/*', expect: /pub\/a/ },
  { command: '[ -n "$HOME" -a -n x ] && echo both', expect: /both/ },
  { command: 'a=(1 2); echo "${a[1]}"', expect: /2/ },
];

function shown(env: Envelope): string {
  // What the command printed, and any error text minus the command as the model wrote it.
  const data = env.data as { output?: string } | null;
  return `${data?.output ?? ''}\n${JSON.stringify(env.error?.details ?? null)}\n${env.error?.message.split('Output tail:')[1] ?? ''}`;
}

for (const backend of ['bwrap', 'none'] as const) {
  const skip = backend === 'bwrap' && !hasBwrap ? 'needs bubblewrap (bwrap) working here' : false;
  const usable = (r: Row) => (!r.only || r.only === backend) && !(r.needs === 'python' && !hasPython) && !(r.needs === 'git' && !hasGit);

  const attackTest = (name: string, rows: Row[], markers: string[]) => {
    // A row with a known, unfixed break is its own todo test (reported, never skipped silently).
    for (const r of rows.filter((x) => usable(x) && x.todo)) attackRows(`todo: ${r.run.join(' ⟶ ')}`, [{ ...r, todo: undefined }], markers, r.todo);
    attackRows(name, rows.filter((x) => usable(x) && !x.todo), markers);
  };
  const attackRows = (name: string, rows: Row[], markers: string[], todo?: string) => test(`review-commands (${backend}): ${name}`, { skip, ...(todo ? { todo } : {}) }, async () => {
    const failures: string[] = [];
    for (const r of rows) {
      const { dir, cleanup } = tempDir('tg-revcmd-');
      const h = new Harness([dir], { policy: policyFromYaml(policyYaml(backend)) });
      try {
        fixture(dir);
        for (const c of r.run) {
          const text = shown(await h.call('run_command', { command: c }));
          const hit = markers.filter((m) => text.includes(m));
          if (hit.length) failures.push(`${r.run.join(' ⟶ ')}: "${c}" showed ${hit.join(', ')}`);
        }
      } finally { h.close(); cleanup(); }
    }
    assert.deepEqual(failures, []);
  });

  attackTest('committed content, moved and linked folders never show what a rule denies', CONTENT_ATTACKS, DENIED);
  attackTest('globs, tests and listings never name what a denied folder holds', NAME_ATTACKS, ['never-named-9']);

  const oracleTest = (name: string, rows: typeof ORACLES, todo?: string) => test(`review-commands (${backend}): ${name}`, { skip, ...(todo ? { todo } : {}) }, async () => {
    const { dir, cleanup } = tempDir('tg-revcmd-');
    const h = new Harness([dir], { policy: policyFromYaml(policyYaml(backend)) });
    try {
      fixture(dir);
      const shape = async (tpl: string, p: string) => {
        const env = await h.call('run_command', { command: tpl.replaceAll('{P}', p) });
        return `${env.error?.code ?? 'ok'} ${shown(env)} ${env.error?.message ?? ''}`.replaceAll(p, 'P').replaceAll(dir, 'D');
      };
      const differ: string[] = [];
      for (const o of rows) {
        if (o.needs === 'git' && !hasGit) continue;
        if ((await shape(o.t, 'priv/x')) !== (await shape(o.t, 'priv/nope'))) differ.push(o.t);
      }
      assert.deepEqual(differ, []);
    } finally { h.close(); cleanup(); }
  });
  oracleTest('an existing and a missing denied path get the same answer', ORACLES.filter((o) => !o.todo));
  for (const o of ORACLES.filter((x) => x.todo)) oracleTest(`todo: same answer for ${o.t}`, [o], o.todo);
  attackTest('an ask rule\'s paths are not read without asking', ASK_ATTACKS, [ASKED, ...DENIED]);

  test(`review-commands (${backend}): controls next to the rules still work`, { skip }, async () => {
    const { dir, cleanup } = tempDir('tg-revcmd-');
    const h = new Harness([dir], { policy: policyFromYaml(policyYaml(backend)) });
    try {
      fixture(dir);
      for (const c of CONTROLS) {
        if (c.needs === 'git' && !hasGit) continue;
        const env = await h.call('run_command', { command: c.command });
        assert.equal(env.ok, true, `${c.command}: ${JSON.stringify(env.error)}`);
        if (c.expect) assert.match(String((env.data as { output: string }).output), c.expect, c.command);
        for (const m of [...DENIED, ASKED]) assert.ok(!shown(env).includes(m), `${c.command} showed ${m}`);
      }
    } finally { h.close(); cleanup(); }
  });

  test(`review-commands (${backend}): an approved command under an ask rule sees the asked path`, { skip }, async () => {
    const { dir, cleanup } = tempDir('tg-revcmd-');
    const h = new Harness([dir], { policy: policyFromYaml(policyYaml(backend)) });
    try {
      fixture(dir);
      const refused = await h.call('run_command', { command: 'cat ask/q' });
      assert.equal(refused.error?.code, 'ApprovalRequired');
      h.session.preApproved = true;
      const env = await h.call('run_command', { command: 'cat ask/q' });
      assert.equal(env.ok, true, JSON.stringify(env.error));
      assert.match(String((env.data as { output: string }).output), /ASK_Q_5/);
      // Approval opens the asked area only: the denied ones stay hidden or refused.
      const priv = await h.call('run_command', { command: 'cat ask/q priv/x' });
      assert.ok(!shown(priv).includes('PRIV_X_1'));
    } finally { h.close(); cleanup(); }
  });

  test(`review-commands (${backend}): a command approved for another reason (the default ask) does not see asked paths`, { skip }, async () => {
    const { dir, cleanup } = tempDir('tg-revcmd-');
    // No blanket allow: every command asks by default; the person approves what they are shown.
    const h = new Harness([dir], { policy: policyFromYaml(policyYaml(backend).replace('mode: ci', 'mode: interactive').replace('  - { tool: "*", decision: allow }\n', '')) });
    try {
      fixture(dir);
      let asked = 0;
      h.session.elicit = async () => { asked++; return { action: 'accept', content: { decision: 'allow_once' } } as never; };
      for (const command of ['cat pub/a; cat as?/q', 'cat pub/a && grep -r ASK_Q .']) {
        const env = await h.call('run_command', { command });
        assert.ok(!shown(env).includes(ASKED), `${command}: ${shown(env)}`);
      }
      // Without a sandbox both are refused outright (a glob and a search, under deny rules); under bwrap they are asked and run.
      if (backend === 'bwrap') assert.ok(asked >= 1, 'the commands were asked (and approved) by default');
    } finally { h.close(); cleanup(); }
  });

  test(`review-commands (${backend}): input to a background shell cannot delete a nested .git or move a denied folder out`, { skip }, async () => {
    const { dir, cleanup } = tempDir('tg-revcmd-');
    const h = new Harness([dir], { policy: policyFromYaml(policyYaml(backend)) });
    let id = '';
    try {
      fixture(dir);
      const bg = await h.call('run_command', { command: 'bash', background: true });
      assert.equal(bg.ok, true, JSON.stringify(bg.error));
      id = (bg.data as { id: string }).id;
      for (const input of ['rm -rf sub\n', 'mv a zz\n', 'mv a/b zz\n']) {
        const r = await h.call('process_write', { id, input });
        assert.equal(r.error?.code, 'ToolNotAllowed', `${input.trim()}: ${JSON.stringify(r.error ?? r.data)}`);
      }
      const ok = await h.call('process_write', { id, input: 'echo fine > pub/f\n' });
      assert.equal(ok.ok, true, JSON.stringify(ok.error));
      assert.equal(readFileSync(path.join(dir, 'sub/.git/config'), 'utf8').includes('bare'), true);
      assert.equal(existsSync(path.join(dir, 'a/b/hidden/z')), true);
      assert.deepEqual(readdirSync(dir).filter((n) => n === 'zz'), []);
    } finally {
      if (id) await h.call('process_kill', { id });
      h.close();
      cleanup();
    }
  });
}
