import type { OptionSpec } from './options.js';

/** Programs that run another command given as their remaining words (SPEC §5: judged on what they run). */
export const WRAPPERS: Record<string, OptionSpec & { lookupOnly?: string[] }> = {
  env: {
    flags: ['-i', '-0', '--null', '--ignore-environment', '-v', '--debug'],
    withArg: ['-u', '--unset', '-C', '--chdir'],
    refuse: ['-S', '--split-string', '--block-signal', '--default-signal', '--ignore-signal', '--list-signal-handling'],
    assignments: true,
  },
  timeout: { flags: ['--preserve-status', '--foreground', '-v', '--verbose'], withArg: ['-s', '--signal', '-k', '--kill-after'], positional: 1 },
  nice: { withArg: ['-n', '--adjustment'], numeric: true },
  nohup: {},
  stdbuf: { withArg: ['-i', '-o', '-e', '--input', '--output', '--error'] },
  command: { flags: ['-p', '-v', '-V'], lookupOnly: ['-v', '-V'] },
  exec: { flags: ['-c', '-l'], withArg: ['-a'] },
  time: { flags: ['-p'] },
  setsid: { flags: ['-c', '--ctty', '-f', '--fork', '-w', '--wait'] },
  ionice: { withArg: ['-c', '--class', '-n', '--classdata'], flags: ['-t', '--ignore'], refuse: ['-p', '--pid', '-P', '--pgid', '-u', '--uid'] },
  chronic: {},
  unbuffer: {},
};

export const XARGS: OptionSpec = {
  flags: ['-0', '--null', '-r', '--no-run-if-empty', '-t', '--verbose', '-p', '--interactive', '-x', '--exit', '-o', '--open-tty', '-i'],
  withArg: ['-a', '--arg-file', '-d', '--delimiter', '-E', '--eof', '-I', '--replace', '-L', '--max-lines', '-n', '--max-args', '-P', '--max-procs', '-s', '--max-chars', '--process-slot-var'],
  refuse: ['-e', '-l'],
};

export const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'tcsh', 'csh', 'yash', 'posh', 'rbash']);

/** Programs whose stdin is code: input written to them is judged as such (process_write). */
export const INTERPRETERS = /^(python[0-9.]*|ipython[0-9]*|node|nodejs|deno|bun|ruby|irb|perl|php|lua[0-9.]*|luajit|R|Rscript|julia|ghci|scala|sbcl|guile|racket|tclsh|wish|osascript|psql|mysql|sqlite3|redis-cli|mongo|mongosh|gdb|lldb|jshell|groovysh|erl|iex|ts-node|tsx)$/;

/** Shell options of `bash -c` that keep the run predictable; anything else is judged as written too. */
export const SAFE_SHELL_FLAGS = new Set(['-c', '-e', '-u', '-x', '-v', '-f', '-E', '-T', '-B', '-h', '-n', '-o', '--norc', '--noprofile', '--posix']);

/**
 * Programs that run a program named in their arguments, with option syntax toolgate does not
 * model: refused (with no arguments some read the commands from their input), so that a rule on the program they run cannot be stepped
 * around (`taskset 1 rm …` under a rule denying rm). Run the program directly instead.
 */
export const LAUNCHERS = new Set([
  'taskset', 'flock', 'setpriv', 'prlimit', 'chrt', 'unshare', 'nsenter', 'fakeroot', 'fakechroot', 'ssh-agent', 'dbus-run-session',
  'dbus-launch', 'strace', 'ltrace', 'valgrind', 'chroot', 'sg', 'runuser', 'systemd-run', 'script', 'parallel',
  'entr', 'firejail', 'numactl', 'cpulimit', 'catchsegv', 'torsocks', 'proxychains', 'proxychains4', 'faketime', 'eatmydata',
  'schroot', 'run-parts', 'start-stop-daemon', 'daemonize', 'tsp', 'at', 'batch', 'expect', 'rlwrap',
  'xvfb-run', 'nocache', 'trickle', 'bwrap', 'flatpak-spawn', 'cgexec',
]);
