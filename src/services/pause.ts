/**
 * Waits `ms`, or less when one of `signals` is aborted (resolves then, never rejects): the sleeps
 * of bootstrap loops, which a drain or a lost lease cuts short.
 */
export function pause(ms: number, ...signals: AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    if (signals.some((s) => s.aborted)) return resolve();
    const done = () => {
      clearTimeout(timer);
      for (const s of signals) s.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    for (const s of signals) s.addEventListener('abort', done, { once: true });
  });
}
