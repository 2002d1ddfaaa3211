import { existsSync, readdirSync, readFileSync } from 'node:fs';

/**
 * The fields of /proc/PID/stat after the command name (field 3, the state, first), or null when
 * there is no such process. The name may hold spaces and parentheses: fields start after the last ')'.
 */
function statFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch { return null; }
}

/** Field 22 of /proc/PID/stat (start time, in clock ticks since boot), or null when there is no such process. */
export function procStartTime(pid: number): string | null {
  return statFields(pid)?.[19] ?? null;
}

/** Children of every process, from /proc (Linux); empty elsewhere. */
export function childrenMap(): Map<number, number[]> {
  const m = new Map<number, number[]>();
  let entries: string[];
  try { entries = readdirSync('/proc'); } catch { return m; }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const fields = statFields(e);
    if (!fields) continue; // gone meanwhile
    const ppid = Number(fields[1]);
    const list = m.get(ppid) ?? [];
    list.push(Number(e));
    m.set(ppid, list);
  }
  return m;
}

/**
 * Kills a process group and every descendant still attached to it by parentage (a child that
 * called setsid leaves the group but not the tree). Synchronous, so it can run on exit.
 */
export function killTree(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  const kids = childrenMap();
  const all: number[] = [];
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop()!;
    all.push(p);
    stack.push(...(kids.get(p) ?? []));
  }
  try { process.kill(-pid, signal); } catch { /* group already gone */ }
  for (const p of all) {
    try { process.kill(-p, signal); } catch { /* not a group leader */ }
    try { process.kill(p, signal); } catch { /* gone */ }
  }
}

/**
 * Kills what is left of a group whose leader has exited and was reaped (`cmd &` children). Only
 * while the number is still that group's: Linux does not give a number out again while a process
 * group of that id has members, so a process (or thread) now holding it as its pid means the group
 * is empty and the number reused — a new process, perhaps leading a group of its own, that is not
 * this group. One look at /proc/PGID (a scan of every process for members cost ~3 ms a command).
 */
export function killGroup(pgid: number): void {
  if (process.platform === 'linux' && existsSync(`/proc/${pgid}`)) return;
  try { process.kill(-pgid, 'SIGKILL'); } catch { /* nothing left */ }
}
