import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InstanceFactory, PkiConnector, PluginInstance } from '@certwright/sdk';
import type { Kernel } from '../../../core/kernel.js';
import { bootKernel, tempDir, type TestContext } from '../../helpers/kernel.js';
import { openssl, verdict } from '../../helpers/pki-tools.js';

/** A kernel (no bootstrap connector: the tests make their own instances) and the local-ca factory it registered. */
export async function localCaKernel(t: TestContext): Promise<{ kernel: Kernel; make: (name: string, config?: Record<string, unknown>) => Promise<PkiConnector> }> {
  const kernel = await bootKernel(t, { pki: { bootstrap: { localCa: false } } });
  const factory = kernel.provided.pkiConnectors.get('local-ca') as InstanceFactory<PkiConnector> | undefined;
  if (!factory) throw new Error('local-ca is not registered');
  const make = async (name: string, config: Record<string, unknown> = {}): Promise<PkiConnector> => factory({ name, config } satisfies PluginInstance);
  return { kernel, make };
}

/** A temp dir for openssl, with helpers to write files, make CSRs and run verdicts. */
export function workbench(t: TestContext) {
  const dir = tempDir(t, 'cw-local-ca-');
  let n = 0;
  const write = (name: string, content: string | Uint8Array): string => {
    writeFileSync(join(dir, name), content);
    return name;
  };
  return {
    dir,
    write,
    read: (name: string): Buffer => readFileSync(join(dir, name)),
    run: (...args: string[]): string => openssl(dir, ...args),
    verdict: (...args: string[]): string => verdict(dir, 'openssl', args),
    /** A CSR (PEM) made by openssl: `alg` ec:P-256 (default), rsa:2048, ed25519. */
    csr(subject: string, options: { alg?: string; sans?: string } = {}): string {
      const key = `k${++n}.key`;
      const alg = options.alg ?? 'ec:P-256';
      const [kind, param] = alg.split(':');
      openssl(dir, 'genpkey', ...(kind === 'rsa' ? ['-algorithm', 'RSA', '-pkeyopt', `rsa_keygen_bits:${param}`] : kind === 'ec' ? ['-algorithm', 'EC', '-pkeyopt', `ec_paramgen_curve:${param}`] : ['-algorithm', kind!.toUpperCase()]), '-out', key);
      return openssl(dir, 'req', '-new', '-key', key, '-subj', subject, ...(options.sans ? ['-addext', `subjectAltName=${options.sans}`] : []));
    },
    /** openssl verify of `leafPem` with the chain [issuing, root]: openssl's words. */
    verifyChain(leafPem: string, chain: string[], extra: string[] = []): string {
      const i = ++n;
      write(`root${i}.pem`, chain[chain.length - 1]!);
      write(`untrusted${i}.pem`, chain.slice(0, -1).join(''));
      write(`leaf${i}.pem`, leafPem);
      return verdict(dir, 'openssl', ['verify', ...extra, '-CAfile', `root${i}.pem`, '-untrusted', `untrusted${i}.pem`, `leaf${i}.pem`]);
    },
    text(pem: string): string {
      return openssl(dir, 'x509', '-in', write(`text${++n}.pem`, pem), '-noout', '-text');
    },
  };
}

/** Lower-case hex of a certificate's serial, as the inventory keeps it. */
export function serialOf(bench: ReturnType<typeof workbench>, pem: string): string {
  return /serial=(\S+)/.exec(bench.run('x509', '-in', bench.write('serial.pem', pem), '-noout', '-serial'))![1]!.toLowerCase();
}
