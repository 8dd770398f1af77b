/** Polls `check` until it holds, failing with `what` after `timeoutMs`: bounded waits instead of sleeps. */
export async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000, everyMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
