/**
 * A kernel serving ACME to the real clients of these tests: listening on a loopback port (the clients speak
 * HTTP to it), the first start's local CA and profile `default`, jobs polled every 200 ms, and the ACME
 * plugin validating against the test's ports and BIND9.
 */
import type { Kernel } from '../../../core/kernel.js';
import type { Bind9 } from '../../helpers/bind9.js';
import { bootKernel, ENROLLMENT_BOOTSTRAP, testConfig, type TestContext } from '../../helpers/kernel.js';
import { freePort } from '../../connectors/acme-upstream/pebble.js';

export async function acmeKernel(t: TestContext, o: { bind: Bind9; httpPort: number; tlsAlpnPort?: number; retries?: number }): Promise<{ kernel: Kernel; port: number; directory: string }> {
  const port = await freePort();
  const validation = { httpPort: o.httpPort, ...(o.tlsAlpnPort ? { tlsAlpnPort: o.tlsAlpnPort } : {}), dnsServers: [`127.0.0.1:${o.bind.port}`], retries: o.retries ?? 1, retryDelayMs: 500 };
  const config = await testConfig(t, {
    ...ENROLLMENT_BOOTSTRAP,
    server: { host: '127.0.0.1', port },
    scheduler: { processEveryMs: 200 },
    plugins: { instances: { 'protocol-acme': [{ name: 'acme', config: { validation } }] } },
  });
  const kernel = await bootKernel(t, {}, { config });
  await kernel.listen();
  return { kernel, port, directory: `http://127.0.0.1:${port}/acme/default/directory` };
}
