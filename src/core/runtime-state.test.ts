import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Harness, policyFromYaml, tempDir } from '../testing/helpers.js';

test('realStateDir: the real path once the folder exists; the path as given (not remembered) before', () => {
  const t = tempDir();
  const h = new Harness([t.dir]);
  try {
    const real = path.join(t.dir, 'real-state');
    const link = path.join(t.dir, 'state-link');
    symlinkSync(real, link);
    // Missing: the link dangles, so the spill guard works on the spelling it was given.
    assert.equal(h.rt.realStateDir(link), link);
    mkdirSync(real);
    // Created later: found then (a missing folder was not cached).
    assert.equal(h.rt.realStateDir(link), real);
    assert.equal(h.rt.realStateDir(link), real);
  } finally {
    h.close();
    t.cleanup();
  }
});

test('stateDir without a root: a relative XDG_STATE_HOME is ignored (as the XDG spec and user-state.ts say), never read against the working directory', () => {
  const t = tempDir();
  const h = new Harness([t.dir]);
  const saved = process.env.XDG_STATE_HOME;
  try {
    process.env.XDG_STATE_HOME = 'rel/state';
    assert.equal(h.rt.stateDir(undefined), path.join(os.homedir(), '.local', 'state', 'toolgate'));
    process.env.XDG_STATE_HOME = path.join(t.dir, 'abs');
    assert.equal(h.rt.stateDir(undefined), path.join(t.dir, 'abs', 'toolgate'), 'control: an absolute one is used');
  } finally {
    if (saved === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = saved;
    h.close();
    t.cleanup();
  }
});

test('relative --state-dir and audit.path (no root) are read against where the process started, not the working directory of the moment', () => {
  const t = tempDir();
  const before = process.cwd();
  const start = path.join(t.dir, 'start');
  mkdirSync(start);
  process.chdir(start);
  try {
    const h = new Harness([t.dir], { stateDir: 'rel-state' });
    const h2 = new Harness([t.dir], { policy: policyFromYaml('version: 1\naudit:\n  path: rel-audit.jsonl\n') });
    process.chdir('/');
    assert.equal(h.rt.stateDir(undefined), path.join(start, 'rel-state'));
    assert.equal(h2.rt.auditFile(undefined), path.join(start, 'rel-audit.jsonl'));
    h.close();
    h2.close();
  } finally {
    process.chdir(before);
    t.cleanup();
  }
});
