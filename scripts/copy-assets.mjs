// Copies the model-facing tool descriptions (src/**/description.md) next to the compiled tools.
import { cp, readdir, mkdir } from 'node:fs/promises';
import { join, dirname } from 'node:path';

async function walk(dir, out = []) {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await walk(p, out);
    else if (e.name.endsWith('.md')) out.push(p);
  }
  return out;
}
for (const file of await walk('src')) {
  const dest = join('dist', file.slice('src/'.length));
  await mkdir(dirname(dest), { recursive: true });
  await cp(file, dest);
}
