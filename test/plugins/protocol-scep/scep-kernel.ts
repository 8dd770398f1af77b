/**
 * A kernel serving SCEP to the real clients of these tests: HTTP on a loopback port (certmonger and
 * scepclient speak plain HTTP), the first start's local CA (RSA when `keyType` says so: scepclient encrypts to
 * every GetCACert certificate and cannot use an EC one) and profile `default`, plus profiles the test adds,
 * and a scratch folder with the CA chain as PEM files for `openssl verify`.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Kernel } from '../../../core/kernel.js';
import type { Enrollment } from '../../../core/enrollment/index.js';
import { bootKernel, testConfig, tempDir, type TestContext } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller } from '../../helpers/security.js';
import { freePort } from '../../connectors/acme-upstream/pebble.js';

export const run = promisify(execFile);

export interface ScepKernel {
  kernel: Kernel;
  /** http://127.0.0.1:<port> */
  http: string;
  dir: string;
  rootFile: string;
  chainFile: string;
  admin: ReturnType<typeof caller>;
  /** A one-time SCEP challenge for `profile` from the request API (password.value). */
  challenge(profile: string): Promise<string>;
}

export async function scepKernel(t: TestContext, o: { keyType?: string; profiles?: Record<string, unknown>[] } = {}): Promise<ScepKernel> {
  const port = await freePort();
  const config = await testConfig(t, {
    pki: { bootstrap: { localCa: true, ...(o.keyType ? { keyType: o.keyType } : {}) } },
    server: { host: '127.0.0.1', port },
    scheduler: { processEveryMs: 200 },
  } as never);
  const kernel = await bootKernel(t, {}, { config });
  await kernel.listen();
  const admin = caller(kernel, { ...ADMIN_HEADERS, host: '127.0.0.1' });
  for (const body of o.profiles ?? []) {
    const res = await admin('POST', '/api/v1/certificate/profiles/', { pkiConnector: 'local-ca', ...body });
    if (res.statusCode !== 201) throw new Error(res.body);
  }
  const enrollment = kernel.container.resolve('enrollment') as Enrollment;
  const chain = await enrollment.gateway.caChain('default', 'local-ca');
  const dir = tempDir(t);
  const rootFile = join(dir, 'root.pem');
  const chainFile = join(dir, 'chain.pem');
  writeFileSync(rootFile, chain[chain.length - 1]!);
  writeFileSync(chainFile, chain.join(''));
  return {
    kernel,
    http: `http://127.0.0.1:${port}`,
    dir,
    rootFile,
    chainFile,
    admin,
    async challenge(profile) {
      const res = await admin('POST', '/api/v1/requests/submit', { module: 'scep', workflow: 'enroll', profile, template: {} });
      if (res.statusCode !== 201) throw new Error(res.body);
      return (res.json() as { password: { value: string } }).password.value;
    },
  };
}

/** `openssl verify` of a PEM file against the chain: true when it prints OK. */
export async function opensslVerifies(k: ScepKernel, certFile: string): Promise<boolean> {
  const out = await run('openssl', ['verify', '-CAfile', k.rootFile, '-untrusted', k.chainFile, certFile]).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
  return /: OK\s*$/.test(out.stdout);
}
