import { performance } from 'node:perf_hooks';

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/** Runs fn n times (after `warm` unmeasured runs) and returns the wall time of each run in ms. */
export async function timeRuns(n: number, fn: (i: number) => Promise<unknown>, warm = 1): Promise<number[]> {
  for (let i = 0; i < warm; i++) await fn(-1 - i);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  return out;
}

export function fmt(ms: number | undefined): string {
  if (ms === undefined || Number.isNaN(ms)) return 'n/a';
  return ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0);
}

export function ratio(a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined || !b) return 'n/a';
  return `${(a / b).toFixed(2)}×`;
}

/**
 * Runs each fn n times, alternating between them call by call (A B, then B A, …) after `warm`
 * unmeasured rounds: servers compared this way see the same machine state (load, CPU clock,
 * cache), where one block after the other would not. Returns the wall times per fn.
 */
export async function timeInterleaved(n: number, fns: Array<() => Promise<unknown>>, warm = 1): Promise<number[][]> {
  const out = fns.map(() => [] as number[]);
  for (let i = -warm; i < n; i++) {
    const order = i % 2 === 0 ? fns.map((_, k) => k) : fns.map((_, k) => fns.length - 1 - k);
    for (const k of order) {
      const t = performance.now();
      await fns[k]!();
      if (i >= 0) out[k]!.push(performance.now() - t);
    }
  }
  return out;
}
