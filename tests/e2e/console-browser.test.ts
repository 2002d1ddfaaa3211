// The console in a real browser (Debian's chromium driven by playwright-core; never downloaded):
// it opens through the one-time URL printed on stderr, shows a pending approval with its diff,
// a click on "Allow once" lets the MCP call complete, and the live table shows the call.
// Set TOOLGATE_SCREENSHOT=docs/console.png to also save a screenshot with two pending requests.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { connectStdio, tempDir } from '../../src/testing/helpers.js';
import { chromiumForTests } from '../../src/testing/chromium.js';

const BROWSER = await chromiumForTests();
const CHROMIUM = BROWSER.path;

async function consoleUrl(stderr: NodeJS.ReadableStream): Promise<string> {
  let buf = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no console URL on stderr: ${buf}`)), 10_000);
    stderr.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = /toolgate console: (http:\/\/127\.0\.0\.1:\d+\/login\?s=\S+)/.exec(buf);
      if (m) { clearTimeout(timer); resolve(m[1]!); }
    });
  });
}

test('console in chromium: a pending approval with its diff, Allow once completes the MCP call, the live table shows it', { skip: BROWSER.skip }, async () => {
  const { chromium } = await import('playwright-core');
  const ws = tempDir('tg-console-');
  const user = tempDir('tg-console-user-');
  writeFileSync(`${ws.dir}/app.js`, 'const greeting = "hello";\nconsole.log(greeting);\n');
  // An earlier server was killed while writing its first record: the audit shows the note for it.
  mkdirSync(`${ws.dir}/.toolgate`, { recursive: true });
  writeFileSync(`${ws.dir}/.toolgate/audit.jsonl`, '{"ts_start":"2024-');
  const env = { XDG_RUNTIME_DIR: path.join(user.dir, 'run'), XDG_STATE_HOME: path.join(user.dir, 'state'), TOOLGATE_NOTIFY: 'off' };
  const conn = await connectStdio(['--workspace', ws.dir], { env });
  const urlP = consoleUrl(conn.transport.stderr as unknown as NodeJS.ReadableStream);
  const browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true, args: ['--no-sandbox'] });
  try {
    const login = await urlP;
    const call = (name: string, args: Record<string, unknown>) => conn.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })
      .then((r) => r.structuredContent as { ok: boolean; error: { code: string } | null });
    assert.equal((await call('read_file', { path: 'app.js' })).ok, true);
    assert.equal((await call('list_dir', { path: '.' })).ok, true);
    assert.equal((await call('grep', { pattern: 'greeting' })).ok, true);

    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await page.goto(login);
    assert.match(page.url(), /^http:\/\/127\.0\.0\.1:\d+\/$/, 'the secret is exchanged for a cookie and dropped from the URL');
    await page.waitForSelector('#pending p.muted');

    const edit = call('edit_file', { path: 'app.js', old_string: '"hello"', new_string: '"hello, console"' });
    const card = page.locator('#pending .card').first();
    await card.waitFor({ timeout: 15_000 });
    const text = await card.innerText();
    assert.match(text, /edit_file/);
    assert.match(text, /-const greeting = "hello";/);
    assert.match(text, /\+const greeting = "hello, console";/);

    if (process.env.TOOLGATE_SCREENSHOT) {
      // A second pending request and a few finished calls, for the README's picture.
      const second = call('run_command', { command: 'npm test' });
      await page.locator('#pending .card').nth(1).waitFor();
      await page.waitForTimeout(300);
      await page.screenshot({ path: process.env.TOOLGATE_SCREENSHOT, fullPage: true });
      await page.locator('#pending .card', { hasText: 'run_command' }).locator('button[data-decision="deny"]').click();
      assert.equal((await second).error?.code, 'ApprovalDenied');
    }

    await page.locator('#pending .card', { hasText: 'edit_file' }).locator('button[data-decision="allow_once"]').click();
    const env2 = await edit;
    assert.equal(env2.ok, true, JSON.stringify(env2.error));
    assert.equal(readFileSync(`${ws.dir}/app.js`, 'utf8'), 'const greeting = "hello, console";\nconsole.log(greeting);\n');

    // The live table (server-sent events) shows the call, and its audit record on a click.
    const row = page.locator('#calls tbody tr', { hasText: 'edit_file' }).first();
    await row.waitFor({ timeout: 10_000 });
    assert.match(await row.innerText(), /ask[\s\S]*ok/);
    await row.click();
    const rec = JSON.parse(await page.locator('#record').innerText());
    assert.equal(rec.tool, 'edit_file');
    assert.equal(rec.approval.source, 'console');
    assert.equal(rec.approval.scope, 'once');
    await page.waitForSelector('#pending p.muted');
    const audit = await page.locator('#audit').innerText();
    assert.match(audit, /verifies/);
    assert.match(audit, /line 1 is a record cut by a crash/, 'the verify note is shown');
  } finally {
    await browser.close();
    await conn.close();
    ws.cleanup();
    user.cleanup();
  }
});
