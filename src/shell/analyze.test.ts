import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeCommand } from './analyze.js';
import { loadShellParser } from './parser.js';
import { decodeAnsiC } from './words.js';

const parser = await loadShellParser();
/** Parts as strings: non-literal words are marked with ~, denied parts with !. */
const parts = (cmd: string) => analyzeCommand(parser, cmd).parts.map((p) => `${p.deny_reason ? '!' : ''}${p.words.map((w) => (w.literal ? '' : '~') + w.text).join(' ')}`);
const files = (cmd: string) => analyzeCommand(parser, cmd).files.map((f) => `${f.access} ${f.word.text}`);

const TABLE: Array<[string, string, string[]]> = [
  ['every part of a list is found', 'a; b && c || d | e & f', ['a', 'b', 'c', 'd', 'e', 'f']],
  ['newlines separate commands', 'a\nb', ['a', 'b']],
  ['quotes are removed', `'to'"uch" c\\ d`, ['touch c d']],
  ['ANSI-C strings are decoded', "$'\\x74ouch' x", ['touch x']],
  ['command substitution is judged, and the word holding it is not literal', 'echo $(id)', ['echo ~$(id)', 'id']],
  ['backticks too', 'echo `id`', ['echo ~`id`', 'id']],
  ['process substitution', 'cat <(id) >(wc)', ['cat ~<(id) ~>(wc)', 'id', 'wc']],
  ['globs, tilde and braces are not literal', 'ls *.ts ~/x {a,b}', ['ls ~*.ts ~~/x ~{a,b}']],
  ['quoted globs are literal', "ls '*.ts'", ['ls *.ts']],
  ['assignments stay in front of the command', 'FOO=1 make', ['FOO=1 make']],
  ['a standalone assignment is a part', 'x=.', ['x=.']],
  ['setting PATH is refused (a later name would run a program from there)', 'PATH=.', ['!PATH=.']],
  ['env is unwrapped with its assignments', 'env -i A=1 make x', ['A=1 make x']],
  ['timeout, nice, nohup, stdbuf, command, exec, time unwrap', 'timeout -s KILL 5 nice -n 2 nohup stdbuf -oL command exec time make', ['make']],
  ['command -v is a lookup, not a run', 'command -v make', ['command -v make']],
  ['an unknown wrapper option is refused', 'env --frobnicate make', ['!env --frobnicate make']],
  ['env -S is refused', "env -S 'rm -rf x'", ['!env -S rm -rf x']],
  ['bash -c is parsed', "bash -c 'a; b'", ['a', 'b']],
  ['bash -c with assignments carries them', "X=1 sh -ec 'a'", ['X=1 a']],
  ['bash -c with dynamic code is refused', 'bash -c "$X"', ['!bash -c ~$X']],
  ['bash with a script is judged as written', 'bash x.sh', ['bash x.sh']],
  ['xargs runs its command with unknown input', 'xargs -0 rm', ['rm ~{xargs input}']],
  ['find -exec is split out', 'find . -name x -exec rm {} \\;', ['rm ~{}', 'find . -name x -exec']],
  ['eval is refused', 'eval x', ['!eval x']],
  ['source and . are refused', 'source x; . y', ['!source x', '!. y']],
  ['a parse error is refused', 'echo "x', ['echo', '!~"x']],
  ['reserved words as commands are refused', 'coproc x', ['!coproc x']],
  ['functions are refused (the body is still listed)', 'f() { a; }; f', ['!~f() { a; }', 'a', 'f']],
  ['loops and conditionals', 'for i in 1; do a; done; while b; do c; done; if d; then e; else f; fi; case x in y) g;; esac', ['a', 'b', 'c', 'd', 'e', 'f', 'g']],
  ['heredoc bodies are searched', 'cat <<EOF\n$(id)\nEOF', ['cat', 'id']],
  ['arithmetic with a substitution', 'echo $((1+$(id)))', ['echo ~$((1+$(id)))', '!~$((1+$(id)))', 'id']],
  ['arithmetic on literal integers is fine', 'echo $((1+2*3)) $[4] ${a[0]} ${x:1:2}', ['echo ~$((1+2*3)) ~$[4] ~${a[0]} ~${x:1:2}']],
  ['arithmetic on a variable is refused', 'echo $((x))', ['echo ~$((x))', '!~$((x))']],
  ['[[ -eq ]] on a non-integer is refused', "[[ 'a[1]' -eq 0 ]]", ["!~[[ 'a[1]' -eq 0 ]]"]],
  ['[[ -eq ]] on literal integers is fine', '[[ 1 -eq 1 ]]', []],
  ['[ -eq ] (the builtin evaluates nothing) is fine on variables', '[ "$x" -eq 0 ]', []],
  ['[ -v ] with a subscript is refused', "[ -v 'a[1]' ]", ["!~[ -v 'a[1]' ]"]],
  ['test -v on a value known only at run time is refused (its subscript is evaluated)', 'test -v "$_"', ['!test -v ~$_']],
  ['function f { } is refused too', 'function f { a; }', ['!~function f { a; }', 'a']],
  ['${!x}, ${x@P}, ${x:=v} are refused', 'echo ${!x} ${x@P} ${x:=v}', ['echo ~${!x} ~${x@P} ~${x:=v}', '!~${!x}', '!~${x@P}', '!~${x:=v}']],
  ['builtin is refused', 'builtin echo hi', ['!builtin echo hi']],
  ['a redirect inside a heredoc line is judged', 'cat <<EOF > out\nhi\nEOF', ['cat']],
  ['words after a redirect target are refused', 'git log >/dev/null --output=x', ['git log', '!~>/dev/null --output=x']],
  ['unusual heredoc delimiters are refused', "cat <<E''\nE\nEOF\nE''", ['cat', "!~E''"]],
  ['git -c cannot be allowed by prefix', 'git -c core.pager=x log', ['~git -c core.pager=x log']],
  ['awk system() cannot be allowed by prefix', "awk 'BEGIN{system(\"x\")}'", ['~awk BEGIN{system("x")}']],
  ['quoted code in a [[ -v ]] subscript cannot be allowed by prefix', "[[ -v 'a[$(id)]' ]]", ["!~[[ -v 'a[$(id)]' ]]", "~[[ -v 'a[$(id)]' ]] (quoted code in a test or arithmetic)"]],
  ['printf -v with a code subscript is refused', "printf -v 'a[$(id)]' x", ['!printf -v a[$(id)] x']],
  ['echo of quoted code is just echo', "echo '$(id)'", ['echo $(id)']],
  ['backticks the grammar leaves inside ${…} are refused', 'echo ${a:-`id`}', ['echo ~${a:-`id`}', '!~`id`']],
  ['backticks in an unquoted heredoc are refused', 'cat <<EOF\n`id`\nEOF', ['cat', '!~`id`\n']],
  ['a quoted heredoc is text', "cat <<'EOF'\n`id` $(id)\nEOF", ['cat']],
  ['a backslash-newline gluing words is refused', 'ec\\\nho hi', ['ec ho hi', '!~ec\\\nho hi']],
  ['a backslash-newline between words is fine', 'ls \\\n  -la', ['ls -la']],
  ['nesting is bounded', `${'bash -c "'.repeat(1)}a"`, ['a']],
];

for (const [name, cmd, want] of TABLE) {
  test(`analyze: ${name}`, () => assert.deepEqual(parts(cmd), want));
}

test('analyze: a 500-part command yields 500 parts', () => {
  assert.equal(analyzeCommand(parser, Array.from({ length: 500 }, (_, i) => `echo ${i}`).join('; ')).parts.length, 500);
});

test('files: redirections and file-writing commands', () => {
  assert.deepEqual(files('echo x > a 2>/dev/null >> b < c'), ['write a', 'write /dev/null', 'write b', 'read c']);
  assert.deepEqual(files('cp s1 s2 d; mv m n; rm -f r; tee -a t; sed -i s/x/y/ f; touch z'), ['write d', 'read s1', 'read s2', 'write n', 'delete m', 'delete r', 'write t', 'write f', 'write z']);
  assert.deepEqual(files('cat a; grep pat b; head -n5 c'), ['read a', 'read b', 'read c']);
  assert.deepEqual(files('echo x 2>&1 >&2'), []);
  assert.deepEqual(files('cat <<EOF > out\nhi\nEOF'), ['write out']);
});

test('files: recursive readers and file-valued options', () => {
  assert.deepEqual(files('grep -rn pat src; grep -R x; rg y lib; grep -d recurse z d'), ['search src', 'search .', 'search lib', 'search d']);
  assert.deepEqual(files('grep --file=pats a; grep -fpats b'), ['read a', 'read pats', 'read b', 'read pats']);
});

test('decodeAnsiC handles escapes and refuses what it cannot model', () => {
  assert.equal(decodeAnsiC('a\\nb\\x41\\101\\u00e9'), 'a\nbAAé');
  assert.equal(decodeAnsiC('\\cA'), null);
  assert.equal(decodeAnsiC('a\\0b'), null);
});
