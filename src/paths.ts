import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package root (the folder with package.json), found from this module's location. Works
 * from the bundle (dist/cli.js), from an installed package and from src/ under tsx alike.
 */
export const PACKAGE_ROOT: string = (() => {
  let d = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(d, 'package.json')) && path.dirname(d) !== d) d = path.dirname(d);
  return d;
})();

/** The built entry point: what replay lines and tests run. */
export const CLI_PATH = path.join(PACKAGE_ROOT, 'dist', 'cli.js');
