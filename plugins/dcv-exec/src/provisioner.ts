/**
 * The `exec` provisioner (like lego's exec provider): runs a program the administrator configured with
 * `present|cleanup <fqdn> <value>` and the same facts in its environment. The program is started directly
 * (spawn with an argument array, no shell), so a value is one argument whatever characters it holds; its
 * environment is PATH and LANG of the service plus the CERTWRIGHT_DCV_* variables and the configured ones,
 * never the service's own environment (which may hold database URLs and keys).
 *
 * Exit 0 is success; any other exit is a PermanentError carrying the end of the program's stderr; a program
 * still running at the deadline is killed (its whole process group) and the call is a TransientError. The
 * program itself must make TXT writes additive and both actions idempotent, as the contract asks.
 */
import { spawn } from 'node:child_process';
import { isAbsolute } from 'node:path';
import { ConfigurationError, PermanentError, TransientError, type DcvProvisioner, type DnsRecord, type PluginContext } from '@certwright/sdk';

export interface ExecConfig {
  command: string;
  timeoutSeconds?: number;
  ttl?: number;
  environment?: Record<string, string>;
  propagationTimeoutSeconds?: number;
  propagationIntervalSeconds?: number;
}

/** Bytes of stdout/stderr kept (the rest is drained and dropped). */
const KEEP = 64 * 1024;
/** Characters of stderr quoted in an error. */
const QUOTE = 1000;

export function execProvisioner(ctx: PluginContext, instanceName: string, config: ExecConfig): DcvProvisioner {
  if (!isAbsolute(config.command)) throw new ConfigurationError(`the exec provisioner "${instanceName}" needs an absolute program path, not "${config.command}"`);
  const timeoutMs = (config.timeoutSeconds ?? 60) * 1000;
  const log = ctx.logger.child({ provisioner: instanceName });

  function run(action: 'present' | 'cleanup', record: DnsRecord): Promise<void> {
    const env: Record<string, string> = {
      ...(process.env.PATH ? { PATH: process.env.PATH } : {}),
      ...(process.env.LANG ? { LANG: process.env.LANG } : {}),
      ...(config.environment ?? {}),
      CERTWRIGHT_DCV_ACTION: action,
      CERTWRIGHT_DCV_FQDN: record.fqdn,
      CERTWRIGHT_DCV_VALUE: record.value,
      CERTWRIGHT_DCV_TYPE: record.type,
      CERTWRIGHT_DCV_ZONE: record.zone ?? '',
      CERTWRIGHT_DCV_TTL: String(record.ttl ?? config.ttl ?? 60),
    };
    return new Promise<void>((resolve, reject) => {
      // detached: the program leads its own process group, so a timeout kills what it started too.
      const child = spawn(config.command, [action, record.fqdn, record.value], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true, shell: false });
      let stderr = '';
      let stdout = '';
      let timedOut = false;
      child.stdout.on('data', (c: Buffer) => {
        if (stdout.length < KEEP) stdout += c.toString('utf8');
      });
      child.stderr.on('data', (c: Buffer) => {
        if (stderr.length < KEEP) stderr += c.toString('utf8');
      });
      const killGroup = (signal: NodeJS.Signals) => {
        try {
          process.kill(-child.pid!, signal);
        } catch {
          /* already gone */
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup('SIGTERM');
        setTimeout(() => killGroup('SIGKILL'), 2000).unref();
      }, timeoutMs);
      child.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(
          err.code === 'ENOENT' || err.code === 'EACCES'
            ? new ConfigurationError(`the exec provisioner "${instanceName}" cannot run ${config.command}: ${err.code === 'ENOENT' ? 'no such file' : 'not executable'}`)
            : new TransientError(`the exec provisioner "${instanceName}" could not start ${config.command}: ${err.message}`, undefined, { cause: err }),
        );
      });
      // 'exit', not 'close': a grandchild that keeps the pipes open must not hold the call past the program's end.
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        child.stdout.destroy();
        child.stderr.destroy();
        const tail = stderr.trim().slice(-QUOTE);
        if (timedOut) {
          killGroup('SIGKILL');
          return reject(new TransientError(`${config.command} ${action} ${record.fqdn} did not finish within ${timeoutMs / 1000} s and was killed`));
        }
        if (code === 0) {
          log.debug({ action, fqdn: record.fqdn, stdout: stdout.slice(0, QUOTE) }, 'exec provisioner done');
          return resolve();
        }
        const how = code !== null ? `exited with status ${code}` : `was killed by ${signal}`;
        reject(new PermanentError(`${config.command} ${action} ${record.fqdn} ${how}${tail ? `: ${tail}` : ' (no stderr)'}`));
      });
    });
  }

  return {
    present: (record) => run('present', record),
    cleanUp: (record) => run('cleanup', record),
    propagation: () => ({ timeoutSeconds: config.propagationTimeoutSeconds ?? 120, intervalSeconds: config.propagationIntervalSeconds ?? 2 }),
  };
}
