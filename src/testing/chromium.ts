import { existsSync } from 'node:fs';

export type ChromiumProbe = { path: string; skip: false } | { path: null; skip: string };

let probe: Promise<ChromiumProbe> | undefined;

/**
 * A chromium that starts here (Debian's, driven by playwright-core; never downloaded), tried once
 * per process: a browser that is installed but cannot run (no permission, missing libraries) makes
 * the browser tests skip with the reason, like a missing one, instead of failing them.
 */
export function chromiumForTests(): Promise<ChromiumProbe> {
  probe ??= (async (): Promise<ChromiumProbe> => {
    const bin = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => existsSync(p));
    if (!bin) return { path: null, skip: 'needs chromium (/usr/bin/chromium): not installed' };
    try {
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({ executablePath: bin, headless: true, args: ['--no-sandbox'], timeout: 30_000 });
      await browser.close();
      return { path: bin, skip: false };
    } catch (e) {
      return { path: null, skip: `needs a chromium that starts: ${bin} did not (${String((e as Error).message).split('\n')[0]})` };
    }
  })();
  return probe;
}
