import { createRequire } from 'node:module';

/**
 * Imported first by cli.ts. Node opens its inspector (a debugger that runs any code it is sent, on
 * 127.0.0.1:9229) in a process that receives SIGUSR1; without a sandbox a command runs as the same
 * user and may send it, then run code inside the server, past every rule and approval. A listener
 * of its own keeps Node from doing so from here on. A signal that came before this line ran (the
 * first ~100 ms of the process) has opened it already: then the process stops at once, unless it
 * was started with --inspect on purpose (execArgv). On Node 22.14 and later, `node
 * --disable-sigusr1` closes that window too.
 */
process.on('SIGUSR1', () => {});
let url: string | undefined;
try {
  url = (createRequire(import.meta.url)('node:inspector') as typeof import('node:inspector')).url();
} catch { /* a Node built without the inspector: nothing to open */ }
if (url !== undefined && !process.execArgv.some((a) => /^--inspect/.test(a))) {
  process.stderr.write('toolgate: Node\'s inspector was opened while toolgate started (a SIGUSR1 from another process): stopping. Start it again.\n');
  process.exit(70);
}
