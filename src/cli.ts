#!/usr/bin/env node
import './cli/no-inspector.js';
import { parseArgs } from 'node:util';
import { COMMAND_HELP, MAIN_HELP } from './cli/help.js';
import { serve } from './cli/serve.js';
import { closeInheritedFds } from './exec/inherited-fds.js';
import { UsageError } from './cli/setup.js';
import { PolicyError } from './policy/load.js';
import { VERSION } from './version.js';

const OPTIONS = {
  workspace: { type: 'string', multiple: true, short: 'w' },
  policy: { type: 'string' },
  profile: { type: 'string' },
  mode: { type: 'string' },
  'state-dir': { type: 'string' },
  transport: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  args: { type: 'string' },
  client: { type: 'string' },
  approve: { type: 'boolean' },
  json: { type: 'boolean' },
  console: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

const COMMANDS = new Set(['serve', 'call', 'tools', 'policy', 'audit', 'init', 'help', 'upstream', 'approvals', 'grants', 'console']);

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  if (values.version) {
    process.stdout.write(`toolgate ${VERSION}\n`);
    return 0;
  }
  const [first, ...rest] = positionals;
  const cmd = first ?? 'serve';
  if (!COMMANDS.has(cmd)) throw new UsageError(`unknown command "${cmd}"; see toolgate --help`);
  if (cmd === 'help' || values.help) {
    const topic = cmd === 'help' ? rest[0] : first;
    process.stdout.write(topic && COMMAND_HELP[topic] ? COMMAND_HELP[topic] : MAIN_HELP);
    return 0;
  }
  // What this process inherited without close-on-exec must not reach what it starts: the commands
  // of `call`, the upstream servers of `tools`, `policy check` and `upstream`. serve closes (and
  // logs) them itself.
  if (cmd !== 'serve') closeInheritedFds();
  // Only `serve` is imported up front: the other commands are loaded when used (start-up of the server).
  switch (cmd) {
    case 'serve':
      await serve(values);
      return -1; // keep running
    case 'call':
      if (!rest[0]) throw new UsageError('usage: toolgate call TOOL --args JSON [--approve]');
      return (await import('./cli/call.js')).callCommand(rest[0], values);
    case 'tools':
      return (await import('./cli/tools-cmd.js')).toolsCommand(values);
    case 'policy':
      if (rest[0] === 'check') return (await import('./cli/policy-cmd.js')).policyCheck(rest[1], values);
      if (rest[0] === 'validate') return (await import('./cli/policy-cmd.js')).policyValidate(rest[1] ?? values.policy);
      throw new UsageError('usage: toolgate policy check TOOL --args JSON | toolgate policy validate FILE');
    case 'init':
      return (await import('./cli/init.js')).initCommand(values);
    case 'upstream':
      return (await import('./cli/upstream-cmd.js')).upstreamCommand(rest[0], rest.slice(1), values);
    case 'approvals':
      return (await import('./cli/approvals-cmd.js')).approvalsCommand(rest[0], rest.slice(1), values);
    case 'grants':
      return (await import('./cli/grants-cmd.js')).grantsCommand(rest[0], rest.slice(1), values);
    case 'console':
      return (await import('./cli/console-cmd.js')).consoleCommand(values);
    case 'audit':
      if (rest[0] === 'verify') return (await import('./cli/audit-cmd.js')).auditVerify(rest[1]);
      throw new UsageError('usage: toolgate audit verify FILE');
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => { if (code >= 0) process.exitCode = code; },
  (e: unknown) => {
    if (e instanceof UsageError || e instanceof PolicyError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`toolgate: ${(e as Error).message}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`toolgate: ${(e as Error)?.stack ?? String(e)}\n`);
      process.exitCode = 1;
    }
  },
);
