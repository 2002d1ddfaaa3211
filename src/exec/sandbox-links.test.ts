// The layout checks before a sandbox (reviews 34, 35), on their own: which links refuse and which do not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { linkOnTheWay, linkOutOfProtected, notAFolderOnTheWay } from './sandbox-links.js';
import { tempDir } from '../testing/helpers.js';

test('a link in a protected folder refuses only when it leads into a root', (t) => {
  const { dir, cleanup } = tempDir('tg-links-');
  t.after(cleanup);
  const ws = realpathSync(dir);
  mkdirSync(`${ws}/.git/hooks`, { recursive: true });
  mkdirSync(`${ws}/sub/.git`, { recursive: true });
  mkdirSync(`${ws}/githooks`);
  mkdirSync(`${ws}/.vscode`);
  mkdirSync(`${ws}/.git/objects/ab`, { recursive: true });
  // Outside every root (read-only in the sandbox), or inside .git where git runs nothing from: fine.
  symlinkSync('/usr/share', `${ws}/.git/hooks/outside`);
  symlinkSync(`${ws}/githooks`, `${ws}/.git/objects/ab/x`);
  symlinkSync('/nonexistent', `${ws}/.vscode/dangling`);
  assert.equal(linkOutOfProtected([ws], [`${ws}/.git`, `${ws}/.vscode`, `${ws}/sub/.git`]), null);
  // Into the workspace: a nested repository's hooks, a settings file.
  symlinkSync('../../githooks', `${ws}/sub/.git/hooks`);
  assert.deepEqual(linkOutOfProtected([ws], [`${ws}/sub/.git`]), { link: `${ws}/sub/.git/hooks`, to: `${ws}/githooks` });
  writeFileSync(`${ws}/shared.json`, '{}');
  symlinkSync('../shared.json', `${ws}/.vscode/tasks.json`);
  assert.deepEqual(linkOutOfProtected([ws], [`${ws}/.vscode`]), { link: `${ws}/.vscode/tasks.json`, to: `${ws}/shared.json` });
});

test('the way to a protected or private path: a link refuses; a private path must be folders all the way', (t) => {
  const { dir, cleanup } = tempDir('tg-links2-');
  t.after(cleanup);
  const ws = realpathSync(dir);
  mkdirSync(`${ws}/real`);
  symlinkSync('real', `${ws}/.idea`);
  assert.deepEqual(linkOnTheWay([ws], [`${ws}/.idea`, `${ws}/.vscode`]), { path: `${ws}/.idea`, link: `${ws}/.idea` });
  assert.equal(linkOnTheWay([ws], [`${ws}/.vscode/x`, '/elsewhere/.idea']), null);
  writeFileSync(`${ws}/.local`, 'a file');
  assert.deepEqual(notAFolderOnTheWay([ws], [`${ws}/.local/state/toolgate`]), { path: `${ws}/.local/state/toolgate`, part: `${ws}/.local` });
  mkdirSync(`${ws}/home/.local/state/toolgate`, { recursive: true });
  assert.equal(notAFolderOnTheWay([ws], [`${ws}/home/.local/state/toolgate`]), null);
});

test('review 36: a link whose target is itself protected is fine; a dangling one into a root, one through a link in a root, a hard link are not', (t) => {
  const { dir, cleanup } = tempDir('tg-links3-');
  t.after(cleanup);
  const ws = realpathSync(dir);
  mkdirSync(`${ws}/.claude/rules`, { recursive: true });
  mkdirSync(`${ws}/.cursor`);
  mkdirSync(`${ws}/.git/hooks`, { recursive: true });
  symlinkSync('../.claude/rules', `${ws}/.cursor/rules`);
  writeFileSync(`${ws}/.git/hooks/overcommit-hook`, '#!/bin/sh\n');
  symlinkSync('overcommit-hook', `${ws}/.git/hooks/pre-commit`);
  const prot = [`${ws}/.claude`, `${ws}/.cursor`, `${ws}/.git`, `${ws}/.vscode`];
  assert.equal(linkOutOfProtected([ws], prot), null);
  mkdirSync(`${ws}/.vscode`);
  symlinkSync('../missing/tasks.json', `${ws}/.vscode/tasks.json`);
  assert.deepEqual(linkOutOfProtected([ws], prot), { link: `${ws}/.vscode/tasks.json`, to: `${ws}/missing/tasks.json` });
});
