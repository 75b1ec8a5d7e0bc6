/**
 * `work`'s value if it resolves within `ms` (and before `closing` does), else `undefined`; a
 * rejection of `work` within that time rejects. Once the time is up, a later rejection of `work`
 * is ignored: the work goes on without whoever asked.
 */
export async function settleWithin<T>(
  work: Promise<T>,
  ms: number,
  closing: Promise<void>,
): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
    void closing.then(() => resolve(undefined));
  });
  void work.catch(() => {
    /* Seen by the race below while anyone waits; past the time, nobody asks (see above). */
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
