import { openSync, closeSync, writeSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from './setup.js';

export const CLIENTS = ['claude-desktop', 'cursor', 'vscode', 'opencode', 'claude-code'] as const;
export type ClientName = (typeof CLIENTS)[number];

/** The starter policy: commented, valid (a test loads it), safe (edits and commands are asked). */
export const STARTER_POLICY = `# toolgate policy for this folder — see policy.example.yaml for every key.
# Check it with:  toolgate policy validate toolgate.yaml
version: 1

# readonly: look, search, read | edit: + write/edit files | full: + run commands, fetch_url
profile: edit
# interactive: "ask" becomes an approval form in the client | ci: "ask" fails with ApprovalRequired
mode: interactive

paths:
  # Added to the built-in secrets (.ssh, .aws, .env, *.pem, *.key, …): never read, listed or written.
  deny: []
  # Added to the built-in protected paths (.git/config, .git/hooks, .vscode, …): readable, never written.
  protect: []

# Decisions: deny beats ask beats allow, whatever the order. A call no rule covers gets its
# tool's default: low risk → allow, medium/high → ask.
rules:
  - tool: read_file
    path: "**"
    decision: allow
  # Let the agent edit sources without asking (remove to be asked for each edit):
  # - tool: edit_file
  #   path: "src/**"
  #   decision: allow
  # Commands (profile full): argv prefixes, checked on every part of a shell command.
  # - tool: run_command
  #   command: ["npm test", "npm run lint"]
  #   decision: allow
  # The network is off: fetch_url only reaches domains a rule allows.
  # - tool: fetch_url
  #   domain: ["docs.python.org", "*.mozilla.org"]
  #   decision: allow

limits:
  timeout_ms: 120000
  output_bytes: 51200
  output_lines: 2000

sandbox:
  backend: auto        # bubblewrap when installed (Linux); none inside a container
  network: deny

network:
  allow_private: false # private, loopback, link-local addresses stay refused
`;

/** dist/cli.js: this module is bundled into it; run from source (tests), the built file beside src. */
function cliPath(): string {
  const here = fileURLToPath(import.meta.url);
  return path.basename(here) === 'cli.js' ? here : path.resolve(path.dirname(here), '../../dist/cli.js');
}

/** The config snippet for one client, stdio and HTTP forms. */
export function clientSnippet(client: ClientName, ws: string, cli: string): string {
  const policy = path.join(ws, 'toolgate.yaml');
  const args = [cli, '--workspace', ws, '--policy', policy];
  const httpCmd = `TOOLGATE_TOKEN=$(openssl rand -hex 32) node ${cli} --transport http --workspace ${ws} --policy ${policy}`;
  const url = 'http://127.0.0.1:3333/mcp';
  const j = (v: unknown) => JSON.stringify(v, null, 2);
  switch (client) {
    case 'claude-desktop':
      return `# Claude Desktop — claude_desktop_config.json (Settings → Developer → Edit Config)
# stdio:
${j({ mcpServers: { toolgate: { command: 'node', args } } })}
# HTTP (Claude Desktop reaches local HTTP servers through mcp-remote); start the server with
#   ${httpCmd}
${j({ mcpServers: { toolgate: { command: 'npx', args: ['-y', 'mcp-remote', url, '--header', 'Authorization: Bearer ${TOOLGATE_TOKEN}'], env: { TOOLGATE_TOKEN: '<the token>' } } } })}
# Note: Claude Desktop cannot answer approval forms; calls that need approval fail with
# ApprovalRequired and a replay line. Allow what you trust with rules in toolgate.yaml.
`;
    case 'cursor':
      return `# Cursor — .cursor/mcp.json in the project (or ~/.cursor/mcp.json)
# stdio:
${j({ mcpServers: { toolgate: { command: 'node', args } } })}
# HTTP; start the server with
#   ${httpCmd}
${j({ mcpServers: { toolgate: { url, headers: { Authorization: 'Bearer <the token>' } } } })}
`;
    case 'vscode':
      return `# VS Code (Copilot agent mode) — .vscode/mcp.json
# stdio:
${j({ servers: { toolgate: { type: 'stdio', command: 'node', args } } })}
# HTTP; start the server with
#   ${httpCmd}
${j({ inputs: [{ type: 'promptString', id: 'toolgate-token', description: 'toolgate bearer token', password: true }], servers: { toolgate: { type: 'http', url, headers: { Authorization: 'Bearer ${input:toolgate-token}' } } } })}
`;
    case 'opencode':
      return `# opencode — opencode.json in the project
# stdio:
${j({ $schema: 'https://opencode.ai/config.json', mcp: { toolgate: { type: 'local', command: ['node', ...args], enabled: true } } })}
# HTTP; start the server with
#   ${httpCmd}
${j({ $schema: 'https://opencode.ai/config.json', mcp: { toolgate: { type: 'remote', url, enabled: true, headers: { Authorization: 'Bearer {env:TOOLGATE_TOKEN}' } } } })}
`;
    case 'claude-code':
      return `# Claude Code
# stdio:
claude mcp add toolgate -- node ${args.join(' ')}
# HTTP; start the server with
#   ${httpCmd}
claude mcp add --transport http toolgate ${url} --header "Authorization: Bearer $TOOLGATE_TOKEN"
`;
  }
}

/** `toolgate init [--client NAME] [--workspace DIR]`: writes toolgate.yaml (never over an existing one), prints the client snippet. */
export async function initCommand(flags: { client?: string; workspace?: string[] }, out: (s: string) => void = (s) => process.stdout.write(s), cli = cliPath()): Promise<number> {
  const client = flags.client;
  if (client !== undefined && !(CLIENTS as readonly string[]).includes(client)) {
    throw new UsageError(`--client must be one of ${CLIENTS.join(', ')}, not "${client}"`);
  }
  const ws = path.resolve(flags.workspace?.[0] ?? '.');
  let st;
  try { st = statSync(ws); } catch { throw new UsageError(`${ws} does not exist`); }
  if (!st.isDirectory()) throw new UsageError(`${ws} is not a directory`);
  const file = path.join(ws, 'toolgate.yaml');
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o644); // never overwrite
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new UsageError(`${file} already exists; not overwritten (delete it or edit it)`);
    throw e;
  }
  try { writeSync(fd, STARTER_POLICY); } finally { closeSync(fd); }
  process.stderr.write(`toolgate: wrote ${file}\n`);
  const which = client ? [client as ClientName] : [...CLIENTS];
  out(which.map((c) => clientSnippet(c, ws, cli)).join('\n'));
  return 0;
}
