import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { tempDir, type TestContext } from '../../helpers/kernel.js';
import { until } from '../../helpers/until.js';

export interface Tinyproxy {
  port: number;
  /** Everything tinyproxy logged so far. */
  log(): string;
  /** Request lines it received, in order: `GET http://127.0.0.1:N/path` forwarded, `CONNECT 127.0.0.1:N` tunnelled. */
  requests(): string[];
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => (socket.end(), resolve(true)));
    socket.on('error', () => resolve(false));
  });

/**
 * Debian's tinyproxy as a real forward proxy on loopback, in the foreground (-d), with Basic authentication;
 * stopped by its PID at teardown. Its log (LogLevel Info) records each request line it receives.
 */
export async function startTinyproxy(t: TestContext, auth: { user: string; password: string }): Promise<Tinyproxy> {
  const dir = tempDir(t, 'cw-tinyproxy-');
  const port = await freePort();
  const logFile = join(dir, 'tinyproxy.log');
  writeFileSync(
    join(dir, 'tinyproxy.conf'),
    [
      `Port ${port}`,
      'Listen 127.0.0.1',
      'Timeout 30',
      `LogFile "${logFile}"`,
      'LogLevel Info',
      `PidFile "${join(dir, 'tinyproxy.pid')}"`,
      'MaxClients 20',
      'Allow 127.0.0.1',
      `BasicAuth ${auth.user} ${auth.password}`,
      // No ConnectPort line: CONNECT is allowed to any port (the tunnelled webhook goes to the test's port).
      '',
    ].join('\n'),
  );
  const child = spawn('tinyproxy', ['-d', '-c', join(dir, 'tinyproxy.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  let exited = false;
  child.on('exit', () => (exited = true));
  t.teardown(async () => {
    if (exited || child.pid === undefined) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    process.kill(child.pid, 'SIGTERM');
    await gone;
  });
  await until('tinyproxy listens', async () => {
    if (exited) throw new Error(`tinyproxy exited: ${stderr}`);
    return accepts(port);
  });
  const log = () => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  return { port, log, requests: () => [...log().matchAll(/Request \(file descriptor \d+\): (\S+ \S+)/g)].map((m) => m[1]!) };
}
