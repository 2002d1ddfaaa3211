// The Dockerfile builds with the builders Debian ships (docker.io's classic builder and
// BuildKit, buildah): every COPY source exists in the build context, and no syntax that older
// builders reject is used. Where a Docker engine or buildah works here, the image is built.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ignore from 'ignore';
import picomatch from 'picomatch';
import { loadPolicyFile } from '../../src/policy/load.js';
import { REPO_ROOT } from '../../src/testing/helpers.js';

const DOCKERFILE = path.join(REPO_ROOT, 'Dockerfile');

interface Instruction { line: number; op: string; args: string }

/** Instructions with continuation lines joined; comments and blank lines dropped. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let l = lines[i]!;
    if (/^\s*(#|$)/.test(l)) continue;
    while (/\\\s*$/.test(l) && i + 1 < lines.length) {
      i++;
      const next = lines[i]!;
      if (/^\s*#/.test(next)) continue;
      l = l.replace(/\\\s*$/, ' ') + next;
    }
    const m = /^\s*(\w+)\s+([\s\S]*)$/.exec(l);
    if (m) out.push({ line: start + 1, op: m[1]!.toUpperCase(), args: m[2]!.trim() });
  }
  return out;
}

/** Flags older builders (docker 20.10 classic, buildah 1.28) reject. */
const NEW_FLAGS = /(^|\s)--(chmod|link|mount|parents|exclude|network|security|checksum|keep-git-dir)\b/;

function problems(text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((l, i) => {
    if (/^\s*#\s*(syntax|check)\s*=/i.test(l)) found.push(`line ${i + 1}: a "# ${l.split('=')[0]!.replace(/^\s*#\s*/, '')}=" parser directive`);
  });
  for (const ins of instructions(text)) {
    if (/<<-?\s*['"]?[A-Za-z_]/.test(ins.args) && ['RUN', 'COPY', 'ADD'].includes(ins.op)) found.push(`line ${ins.line}: a heredoc in ${ins.op}`);
    if (NEW_FLAGS.test(ins.args) && ['RUN', 'COPY', 'ADD'].includes(ins.op)) found.push(`line ${ins.line}: ${ins.op} ${NEW_FLAGS.exec(ins.args)![0].trim()}`);
    if (ins.op === 'ADD' && /(^|\s)(https?:|git@)/.test(ins.args)) found.push(`line ${ins.line}: ADD of a remote source`);
  }
  return found;
}

/** The COPY/ADD sources taken from the build context (not --from=another stage). */
function contextSources(text: string): Array<{ line: number; src: string }> {
  const out: Array<{ line: number; src: string }> = [];
  for (const ins of instructions(text)) {
    if (ins.op !== 'COPY' && ins.op !== 'ADD') continue;
    const words = ins.args.startsWith('[') ? (JSON.parse(ins.args) as string[]) : ins.args.split(/\s+/);
    if (words.some((w) => w.startsWith('--from='))) continue;
    const plain = words.filter((w) => !w.startsWith('--'));
    for (const src of plain.slice(0, -1)) out.push({ line: ins.line, src: src.replace(/^\.\//, '').replace(/\/$/, '') || '.' });
  }
  return out;
}

/** Paths under `dir`; folders `prune` names (e.g. ignored by .dockerignore: bench/.data holds 250k files) are listed, not entered. */
function walk(dir: string, prune: (rel: string) => boolean = () => false, rel = '', out: string[] = []): string[] {
  for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === '.git') continue;
    const r = rel ? `${rel}/${e.name}` : e.name;
    out.push(r);
    if (e.isDirectory() && !prune(`${r}/`)) walk(dir, prune, r, out);
  }
  return out;
}

test('Dockerfile: no syntax that the classic builder or buildah rejects', () => {
  assert.deepEqual(problems(readFileSync(DOCKERFILE, 'utf8')), []);
});

test('Dockerfile syntax check catches heredocs, # syntax lines and new COPY/RUN flags (control)', () => {
  const bad = [
    '# syntax=docker/dockerfile:1', 'FROM node:20',
    "COPY <<'YAML' /etc/x.yaml", 'a: 1', 'YAML',
    'COPY --chmod=755 a /b', 'COPY --link a /b', 'RUN --mount=type=cache,target=/x true',
    'RUN cat <<EOF > /x', 'EOF', 'COPY --parents a/b /c', 'ADD https://example.com/x /x',
  ].join('\n');
  assert.equal(problems(bad).length, 8, problems(bad).join('\n'));
});

test('Dockerfile: every COPY source exists in the build context and is not excluded by .dockerignore', () => {
  const text = readFileSync(DOCKERFILE, 'utf8');
  const ig = ignore().add(existsSync(path.join(REPO_ROOT, '.dockerignore')) ? readFileSync(path.join(REPO_ROOT, '.dockerignore'), 'utf8') : '');
  const files = walk(REPO_ROOT, (r) => ig.ignores(r));
  const sources = contextSources(text);
  assert.ok(sources.length >= 5, `found the COPY lines: ${JSON.stringify(sources)}`);
  for (const { line, src } of sources) {
    if (/[*?[]/.test(src)) {
      const isMatch = picomatch(src);
      assert.ok(files.some((f) => isMatch(f) && !ig.ignores(f)), `line ${line}: COPY ${src} matches nothing in the build context`);
      continue;
    }
    assert.ok(existsSync(path.join(REPO_ROOT, src)), `line ${line}: COPY ${src}, which does not exist in the repository`);
    assert.ok(src === '.' || !ig.ignores(src), `line ${line}: COPY ${src}, which .dockerignore leaves out of the build context`);
  }
});

test("the image's policy (docker/policy.yaml) is a real file that loads, with the sandbox off", async () => {
  const text = readFileSync(DOCKERFILE, 'utf8');
  const copy = instructions(text).find((i) => i.op === 'COPY' && /\/etc\/toolgate\/toolgate\.yaml$/.test(i.args));
  assert.ok(copy, 'the Dockerfile copies a policy to /etc/toolgate/toolgate.yaml');
  const src = copy.args.split(/\s+/)[0]!;
  const p = await loadPolicyFile(path.join(REPO_ROOT, src));
  assert.equal(p.data.sandbox.backend, 'none');
  assert.match(text, /--policy", "\/etc\/toolgate\/toolgate\.yaml"/, 'the entrypoint uses that policy');
});

function works(cmd: string, args: string[]): boolean {
  const r = spawnSync(cmd, args, { stdio: 'ignore', timeout: 15_000 });
  return r.status === 0;
}

const engine = works('docker', ['info']) ? 'docker' : works('buildah', ['info']) ? 'buildah' : null;

test('the image builds (docker build or buildah bud) and answers --version', {
  skip: engine ? (process.env.TOOLGATE_SKIP_DOCKER_BUILD === '1' ? 'TOOLGATE_SKIP_DOCKER_BUILD=1' : false) : 'needs a working Docker engine or buildah (docker info / buildah info failed)',
  timeout: 1_200_000,
}, () => {
  const tag = `toolgate-test:${process.pid}`;
  const build = engine === 'docker'
    ? spawnSync('docker', ['build', '-t', tag, REPO_ROOT], { encoding: 'utf8', env: { ...process.env, DOCKER_BUILDKIT: '0' }, timeout: 1_100_000 })
    : spawnSync('buildah', ['bud', '-t', tag, REPO_ROOT], { encoding: 'utf8', timeout: 1_100_000 });
  assert.equal(build.status, 0, `${engine} build failed:\n${(build.stdout ?? '').slice(-3000)}\n${(build.stderr ?? '').slice(-3000)}`);
  try {
    if (engine === 'docker') {
      const run = spawnSync('docker', ['run', '--rm', '--entrypoint', 'toolgate', tag, '--version'], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /\d+\.\d+\.\d+/);
    }
  } finally {
    spawnSync(engine!, ['rmi', '-f', tag], { stdio: 'ignore' });
  }
});
