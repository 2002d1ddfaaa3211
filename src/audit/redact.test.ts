// Secrets never reach the audit log: by key name and by value shape.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { redact, redactString, REDACTED } from './redact.js';

const JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
const GHP = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
const SK = 'sk-' + 'proj-abcdefghijklmnop1234567890';
const ANT = 'sk-ant-api03-' + 'abcdefghijklmnopqrstuvwx';
const AKIA = 'AKIA' + 'IOSFODNN7EXAMPLE';

describe('redaction by key name', () => {
  const keys = ['token', 'access_token', 'refreshToken', 'secret', 'client_secret', 'password', 'PASSWORD', 'passwd', 'db_password',
    'api_key', 'apiKey', 'x-api-key', 'authorization', 'Authorization', 'cookie', 'Set-Cookie', 'key', 'private_key', 'ssh_key', 'credentials'];
  for (const k of keys) {
    test(`"${k}" is redacted`, () => {
      assert.deepEqual(redact({ [k]: 'plain-value' }), { [k]: REDACTED });
    });
  }
  test('nested objects and arrays are redacted too', () => {
    assert.deepEqual(redact({ headers: { Authorization: 'x' }, list: [{ password: 'p' }] }), { headers: { Authorization: REDACTED }, list: [{ password: REDACTED }] });
  });
  test('a secret key holding an object is redacted whole', () => {
    assert.deepEqual(redact({ secret: { a: 1 } }), { secret: REDACTED });
  });
  test('ordinary keys are kept', () => {
    const args = { path: 'src/a.ts', content: 'hello', offset: 3, keyboard: 'us', monkey: 'x', replace_all: true, max_tokens: 100 };
    assert.deepEqual(redact(args), args);
  });
  test('redact copies: the input is not changed', () => {
    const args = { password: 'p' };
    redact(args);
    assert.equal(args.password, 'p');
  });
  test('very deep nesting ends in a redaction, not a crash', () => {
    let v: unknown = 'x';
    for (let i = 0; i < 100; i++) v = { a: v };
    assert.doesNotThrow(() => JSON.stringify(redact(v)));
  });
});

describe('redaction by value shape, wherever it appears', () => {
  const rows: Array<[string, string, string]> = [
    ['JWT', `token is ${JWT} ok`, JWT],
    ['GitHub ghp_ token', `git clone https://${GHP}@github.com/x/y`, GHP],
    ['OpenAI sk- key', `OPENAI=${SK}`, SK],
    ['Anthropic sk-ant- key', `curl -H "x-api-key: ${ANT}"`, ANT],
    ['AWS access key id', `aws configure set aws_access_key_id ${AKIA}`, AKIA],
    ['Bearer header', 'curl -H "Authorization: Bearer abcdef0123456789xyz" https://x', 'abcdef0123456789xyz'],
    ['lower-case bearer header', 'curl -H "authorization: bearer abcdef0123456789xyz" https://x', 'abcdef0123456789xyz'],
    ['private key block', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----', 'b3BlbnNzaC1rZXk'],
    ['secret-named variable assignment in a command', 'GITHUB_TOKEN=hunter2hunter2 npm publish', 'hunter2hunter2'],
    ['password= in a URL query', 'curl "https://x/login?user=a&password=s3cr3tpass"', 's3cr3tpass'],
  ];
  for (const [name, input, secret] of rows) {
    test(name, () => {
      const out = redactString(input);
      assert.ok(!out.includes(secret), out);
      assert.ok(out.includes(REDACTED), out);
    });
  }
  test('values are redacted under innocent keys and in arrays', () => {
    const out = JSON.stringify(redact({ command: `echo ${GHP}`, argv: ['x', SK] }));
    assert.ok(!out.includes(GHP) && !out.includes(SK), out);
  });
  test('ordinary text is left alone', () => {
    for (const s of ['npm run test', 'src/sk-learn/model.py', 'task-list-of-things', 'the basic idea', 'a.b.c', 'eyJ']) {
      assert.equal(redactString(s), s);
    }
  });
});

describe('the shortcuts of redactString skip no secret', () => {
  // The shortest text each pattern redacts: a check that skips a pattern too eagerly misses it.
  const rows: Array<[string, string]> = [
    ['Basic abcdefgh', REDACTED],
    ['xoxb-abcdefghij', REDACTED],
    ['token=abc', `token=${REDACTED}`],
    ['PASSWORD = "x y"', `PASSWORD=${REDACTED}`],
    ['--token v', `--token ${REDACTED}`],
    ['-secret x', `-secret ${REDACTED}`],
    ['a://u:p@h', `a://u:${REDACTED}@h`],
    ['secret:x', `secret:${REDACTED}`],
    ['"apiKey": "v"', `"apiKey": ${REDACTED}`],
  ];
  for (const [input, want] of rows) test(JSON.stringify(input), () => assert.equal(redactString(input), want));
  test('key names in every style', () => {
    for (const k of ['api_key', 'apikey', 'x_auth', 'db_pwd', 'gh_pat', 'sentry_dsn', 'client__secret', 'token2']) {
      assert.deepEqual(redact({ [k]: 'v' }), { [k]: REDACTED }, k);
    }
    for (const k of ['path', 'old_string', 'expected_sha256', 'max_tokens', 'keyboard', 'key_count']) assert.deepEqual(redact({ [k]: 'v' }), { [k]: 'v' }, k);
  });
});
