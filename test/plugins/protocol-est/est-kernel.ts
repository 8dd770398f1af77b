/**
 * A kernel serving EST to the real clients of these tests: HTTP and HTTPS on loopback ports, the first start's
 * local CA and profile `default` (EST enabled by the bootstrap), TLS client certificates requested, and a
 * scratch folder holding the local CA's root and the profile's chain as PEM files for the clients.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Kernel } from '../../../core/kernel.js';
import type { Enrollment } from '../../../core/enrollment/index.js';
import { bootKernel, ENROLLMENT_BOOTSTRAP, testConfig, tempDir, type TestContext } from '../../helpers/kernel.js';
import { freePort } from '../../connectors/acme-upstream/pebble.js';

export const run = promisify(execFile);

export interface EstKernel {
  kernel: Kernel;
  /** https://127.0.0.1:<port> */
  https: string;
  dir: string;
  /** The local CA's root (trust anchor of the HTTPS listener and of issued certificates). */
  rootFile: string;
  /** Issuing CA then root, for `openssl verify -untrusted`. */
  chainFile: string;
}

export async function estKernel(t: TestContext, plugins: Record<string, unknown> = {}): Promise<EstKernel> {
  const port = await freePort();
  const config = await testConfig(t, {
    ...ENROLLMENT_BOOTSTRAP,
    server: { host: '127.0.0.1', port, tls: { port: 0, requestClientCert: true } },
    ...(Object.keys(plugins).length ? { plugins: { instances: plugins } } : {}),
  } as never);
  const kernel = await bootKernel(t, {}, { config });
  await kernel.listen();
  const enrollment = kernel.container.resolve('enrollment') as Enrollment;
  const chain = await enrollment.gateway.caChain('default', 'local-ca');
  const dir = tempDir(t);
  const rootFile = join(dir, 'root.pem');
  const chainFile = join(dir, 'chain.pem');
  writeFileSync(rootFile, chain[chain.length - 1]!);
  writeFileSync(chainFile, chain.join(''));
  return { kernel, https: kernel.httpsAddress!, dir, rootFile, chainFile };
}

/** `openssl verify` of a PEM file against the profile's chain: true when it prints OK. */
export async function opensslVerifies(est: EstKernel, certFile: string): Promise<boolean> {
  const out = await run('openssl', ['verify', '-CAfile', est.rootFile, '-untrusted', est.chainFile, certFile]).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
  return /: OK\s*$/.test(out.stdout);
}
