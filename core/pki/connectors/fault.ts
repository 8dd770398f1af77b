/**
 * Fault injection for the crash tests ("nothing lost"): `faultPoint(name)` kills its own process with
 * SIGKILL when the environment variable CERTWRIGHT_FAULT equals `name`, so a test can prove that a crash
 * at that exact point loses nothing. Unset (production), it does nothing.
 *
 * Points: `pki-after-connector-answer` — the connector answered, the completion transaction has not run.
 */
export function faultPoint(name: string): void {
  if (process.env.CERTWRIGHT_FAULT === name) process.kill(process.pid, 'SIGKILL');
}
