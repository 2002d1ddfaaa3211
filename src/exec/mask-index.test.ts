// The mask index against the kernel's inotify queue: events it never sees must not leave a secret unmasked.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../testing/helpers.js';
import { PathRules } from '../workspace/path-rules.js';
import { MaskIndex } from './mask-index.js';

const QUEUE = (() => { try { return Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8')); } catch { return 0; } })();
const skip = process.platform !== 'linux' || !QUEUE ? 'needs Linux inotify (/proc/sys/fs/inotify/max_queued_events)' : false;

test('a .env created while the inotify queue overflowed (events dropped unseen) is still masked for the next command', { skip }, async () => {
  const { dir, cleanup } = tempDir('tg-mask-overflow-');
  try {
    mkdirSync(path.join(dir, 'w', 'deep'), { recursive: true });
    const index = new MaskIndex(dir, { rules: PathRules.withDefaults() });
    assert.equal([...(await index.current()).paths.keys()].some((p) => p.endsWith('.env')), false, 'control: no secret yet');
    // spawnSync blocks this event loop: nothing reads the inotify queue while 2× its size of
    // events pile up, so the kernel drops the rest — including the .env's own creation.
    const n = QUEUE * 2;
    const script = `import os\nfor i in range(${n}):\n    fd=os.open('w/x', os.O_CREAT|os.O_WRONLY); os.close(fd); os.unlink('w/x')\nopen('w/deep/.env','w').write('S=1')\n`;
    const r = spawnSync('python3', ['-c', script], { cwd: dir });
    if (r.status !== 0) {
      // No python: the same flood from node in a child process.
      const js = `const fs=require('fs');for(let i=0;i<${n};i++){fs.closeSync(fs.openSync('w/x','w'));fs.unlinkSync('w/x')}fs.writeFileSync('w/deep/.env','S=1')`;
      assert.equal(spawnSync(process.execPath, ['-e', js], { cwd: dir }).status, 0);
    }
    const { paths } = await index.current();
    assert.ok(paths.has(path.join(dir, 'w', 'deep', '.env')), `the new .env is masked: ${[...paths.keys()].join(', ')}`);
    // Control: an ordinary change after that is seen through the events again.
    writeFileSync(path.join(dir, 'w', 'server.pem'), 'k');
    assert.ok((await index.current()).paths.has(path.join(dir, 'w', 'server.pem')));
    index.close();
  } finally {
    cleanup();
  }
});
