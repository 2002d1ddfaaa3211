/** Defaults of the policy's `commands:` section (policy/schema.ts); documented in policy.example.yaml. */
export const DEFAULT_DENY_PROGRAMS = ['sudo', 'su', 'doas', 'pkexec', 'mkfs', 'mkfs.*', 'mke2fs', 'mkswap', 'fdisk', 'sfdisk', 'cfdisk', 'parted', 'wipefs',
  'shutdown', 'reboot', 'halt', 'poweroff', 'init', 'telinit'];
export const DEFAULT_INTERACTIVE = ['vi', 'vim', 'nvim', 'view', 'vimdiff', 'nano', 'pico', 'emacs', 'less', 'more', 'most', 'top', 'htop', 'btop', 'atop',
  'man', 'info', 'watch', 'tmux', 'screen', 'mc', 'ranger', 'nnn', 'ftp', 'telnet'];
export const DEFAULT_REPL = ['python', 'python2', 'python3', 'node', 'deno', 'bun', 'irb', 'ruby', 'perl', 'php', 'lua', 'R', 'ghci', 'scala',
  'psql', 'mysql', 'mariadb', 'sqlite3', 'redis-cli', 'mongo', 'mongosh', 'bash', 'sh', 'zsh', 'dash', 'fish'];
