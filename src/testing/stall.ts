/** The longest the event loop went without turning while `f` ran (a 10 ms timer measures it). */
export async function longestStall<T>(f: () => Promise<T>): Promise<{ value: T; stall: number }> {
  let last = performance.now();
  let stall = 0;
  const iv = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 10);
  try {
    const value = await f();
    return { value, stall: Math.max(stall, performance.now() - last) };
  } finally {
    clearInterval(iv);
  }
}
