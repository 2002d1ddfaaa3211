import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pathCandidates } from './path-rules.js';

/** The former split-and-join spelling: the new one must give the same list, in the same order. */
function reference(rel: string | null, abs: string): string[] {
  const out: string[] = [];
  const add = (p: string) => {
    const parts = p.split('/').filter(Boolean);
    for (let i = parts.length; i >= 1; i--) out.push(parts.slice(0, i).join('/'));
  };
  if (rel) add(rel);
  add(abs);
  return out;
}

test('pathCandidates: each path and ancestor, relative then absolute, as the split-and-join spelling gives', () => {
  const fixed: Array<[string | null, string]> = [
    [null, '/'], ['', '/w'], ['a', '/w/a'], ['a/b/c.ts', '/work/ws/a/b/c.ts'], [null, '//w//a/'], ['a//b/', '///x'],
    ['.env', '/w/.env'], ['a/.ssh/id', '/w/a/.ssh/id'], ['\u0000', '/w/\u0000'], ['é/ü', '/r/é/ü'],
  ];
  for (const [rel, abs] of fixed) assert.deepEqual(pathCandidates(rel, abs), reference(rel, abs), `${rel} ${abs}`);
  const pick = (s: string) => s[Math.floor(Math.random() * s.length)]!;
  for (let n = 0; n < 2000; n++) {
    const mk = () => Array.from({ length: Math.floor(Math.random() * 12) }, () => pick('ab/./\u0000-')).join('');
    const rel = Math.random() < 0.2 ? null : mk();
    const abs = (Math.random() < 0.8 ? '/' : '') + mk();
    assert.deepEqual(pathCandidates(rel, abs), reference(rel, abs), JSON.stringify([rel, abs]));
  }
});
