export const MAIN_HELP = `toolgate — an MCP server that gives an agent controlled tools on a folder,
behind a policy gate, user approvals and an audit trail.

Usage:
  toolgate [serve] --workspace DIR [options]      serve MCP (stdio by default)
  toolgate call TOOL --args JSON [--approve]      run one tool call, print the envelope
  toolgate tools                                   the catalog: name, risk, permissions, decision
  toolgate policy check TOOL --args JSON          the decision for a call and the rule that made it
  toolgate policy validate FILE                    check a policy file (line and key of any fault)
  toolgate audit verify FILE                       check an audit log's hash chain
  toolgate upstream list | trust NAME [TOOL]       mounted MCP servers, their tools and pins
  toolgate approvals [list --json | answer ID D]   answer pending approvals (the inbox)
  toolgate console                                 print the console's URL and open it
  toolgate grants list | revoke ID                 stored "always allow" grants
  toolgate init [--client NAME] [--workspace DIR] write a starter toolgate.yaml, print a client's config

Options (serve, call, tools, policy check):
  --workspace DIR     a root the agent may use; repeat for several. The ceiling: client
                      MCP roots can narrow it, never widen it. Without it, the client's
                      roots are the workspace; with neither, every call fails.
  --policy FILE       policy YAML (see policy.example.yaml). Default: built-in rules.
  --profile NAME      readonly | edit | full | a profile from the policy (overrides the file)
  --mode MODE         interactive | ci (ci: nobody is asked; "ask" becomes ApprovalRequired)
  --state-dir DIR     where the audit log and spilled output go (default <workspace>/.toolgate)
  --transport T       stdio | http (default stdio)
  --console off|PORT  the approval console on 127.0.0.1 (default: a free port; URL on stderr)
  --host H --port P   for --transport http (default 127.0.0.1:3333; needs TOOLGATE_TOKEN)
  -h, --help          help for a command (toolgate call --help, …)
  -v, --version       print the version

Environment:
  TOOLGATE_LOG_LEVEL  pino log level for stderr (default info); stdout carries only MCP messages
  TOOLGATE_TOKEN      bearer token required by the HTTP transport
  TOOLGATE_RG         off: grep and glob use their built-in engines; /path/to/rg: that ripgrep binary
  TOOLGATE_STARTER    off: start rg and commands directly from the server instead of through
                      its small starter process (Linux; commands from the second on, rg once
                      it runs or the server holds 96 MB: a fork costs more in a bigger process)
  TOOLGATE_GLOB_ENGINE  how glob lists a big folder: index (default: each folder's entries
                      remembered, re-checked by one look at the folder), ripgrep (rg --files),
                      walker (the built-in walker, reading every folder)
  TOOLGATE_GLOB_WALK_MAX  glob walks a folder of up to this many entries itself before it
                      uses its engine (default 1000; 0: always the engine)
  TOOLGATE_GREP_WALK_MAX  grep searches a folder of up to this many entries (and 2 MB) itself
                      before it starts ripgrep (default 1000; 0: always ripgrep when present)
  TOOLGATE_SANDBOX    none: act as if bubblewrap were not installed (auto → no sandbox)
  TOOLGATE_NOTIFY     off: no desktop notification when an approval starts waiting
  XDG_STATE_HOME      stored grants live in $XDG_STATE_HOME/toolgate (default ~/.local/state)
  XDG_RUNTIME_DIR     the inbox sockets live in $XDG_RUNTIME_DIR/toolgate (default /tmp/toolgate-UID)
  TOOLGATE_CHECK_ENVELOPE  1: check every result against the tool's output schema (tests, debugging)

Examples:
  toolgate --workspace ~/code/app
  toolgate call read_file --workspace . --args '{"path":"README.md","limit":20}'
  toolgate policy check run_command --workspace . --policy toolgate.yaml --args '{"command":"npm test"}'
`;

export const COMMAND_HELP: Record<string, string> = {
  serve: `toolgate serve --workspace DIR [--policy FILE] [--profile NAME] [--mode interactive|ci]
               [--state-dir DIR] [--transport stdio|http] [--host 127.0.0.1] [--port 3333]
               [--console off|PORT]

Serves MCP. With stdio (the default) stdout carries only protocol messages and logs go to
stderr. Every tools/call passes validation, the policy gate, approval, the sandbox, and is
written to the audit log (<state-dir>/audit.jsonl). A call that needs approval waits in the
approval inbox (and the client's form, when it has one) until someone answers: the console,
whose one-time URL is printed on stderr, or \`toolgate approvals\`.
`,
  approvals: `toolgate approvals [--workspace DIR | --state-dir DIR]
toolgate approvals list [--json]
toolgate approvals answer ID allow_once|allow_session|allow_always|deny

The pending approval requests of the running toolgate servers (of one workspace with
--workspace / --state-dir; of all yours without). On a terminal, without a sub-command: the
requests one at a time (tool, risk, exact arguments, the diff, the grant), one key per answer:
o once, s session, a always, d deny, n next, q quit. list --json prints an array of
{id, server_pid, session_id, tool, risk, args, rule, grant, diff, created_at}. answer exits 0
when the answer was taken, 1 when the id is unknown or already answered. An answer to a request
whose call stopped waiting applies once to a retry of the same call.
`,
  console: `toolgate console [--workspace DIR | --state-dir DIR]

Prints a fresh one-time URL of the console of each running server and opens the first in the
browser (xdg-open / open) when there is a display. The URL's secret works once; it is
exchanged for a cookie. Servers started with --console off have none.
`,
  grants: `toolgate grants list [--workspace DIR] [--json]
toolgate grants revoke ID [--workspace DIR]

"Always allow" answers are stored as rules in $XDG_STATE_HOME/toolgate/grants/ (one file per
workspace root, never inside a workspace) and apply to every later call, also after a restart.
list shows them (all workspaces without --workspace); revoke removes one (exit 1 if no such id).
`,
  call: `toolgate call TOOL --args JSON [--approve] --workspace DIR [--policy FILE] [...]

Runs one tool call through the same pipeline as the server and prints the result envelope
(JSON) on stdout. Exit 0 when ok, 1 when the call failed. With --approve you, at the shell,
are the approver: a call the policy would "ask" about runs (a "deny" still does not). This is
what the replay line of an ApprovalRequired error runs.
`,
  tools: `toolgate tools [--workspace DIR] [--policy FILE] [--profile NAME] [--json]

Lists every tool: name, version, risk, permissions, and the decision the policy gives a
call that no path, command or domain rule covers (allow, ask, deny — deny means hidden).
`,
  policy: `toolgate policy check TOOL --args JSON --workspace DIR [--policy FILE] [--profile NAME]
toolgate policy validate FILE

check: prints the decision (allow | ask | deny), the rule that made it, and every part that
was judged (each path, each simple command of a shell command, each domain). Nothing runs.
validate: loads the file as the server would; exit 0 when valid, 2 with the line and key at
fault when not.
`,
  init: `toolgate init [--client claude-desktop|cursor|vscode|opencode|claude-code] [--workspace DIR]

Writes a commented starter toolgate.yaml in DIR (default: the current folder; an existing file is
never overwritten) and prints the client's MCP configuration on stdout, stdio and HTTP forms
(every client's when --client is not given).
`,
  upstream: `toolgate upstream list [--policy FILE] [--json]
toolgate upstream trust NAME [TOOL] [--policy FILE]

The upstream MCP servers of the policy (upstreams:). This command connects to each upstream
itself (it does not ask a running server; a server's restarts are in its log): list prints
each upstream, ready or failed (with the error), and each mounted tool with its pin — trusted,
changed (its name, description, schemas or annotations differ from what was approved), new (not
seen when the upstream was pinned), corrupt (the pin file cannot be read: all refused), or
unpinned (never started yet: pinned on first use). A changed or new tool is hidden and refused
by the server until you check it and run trust, which pins what the upstream shows now (all its
tools, or only TOOL, by its own name). Pins live in $XDG_STATE_HOME/toolgate/pins/NAME.json,
outside every workspace; a running server picks a new trust up within seconds.
`,
  audit: `toolgate audit verify FILE

Checks that every line of an audit log is a JSON record chained to the line before
(prev_hash) and that FILE.head names the last line. Exit 0 when intact; exit 1 naming the
first bad line when a line was modified, removed, reordered or the tail was cut.
`,
};
