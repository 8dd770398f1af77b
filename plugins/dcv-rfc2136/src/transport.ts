/**
 * One DNS exchange with the configured server: UDP, or TCP when the message does not fit a 512-byte datagram
 * or the answer comes back truncated (TC). A missing answer, a refused connection or a reset is a passing
 * failure (TransientError): updates are idempotent, so the kernel may simply retry.
 */
import { createSocket } from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { connect, isIP } from 'node:net';
import { TransientError } from '@certwright/sdk';

export interface DnsServer {
  host: string;
  port: number;
}

const UDP_LIMIT = 512;

async function addressOf(host: string): Promise<{ address: string; family: 4 | 6 }> {
  const literal = host.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(literal);
  if (family === 4 || family === 6) return { address: literal, family };
  try {
    const found = await lookup(literal);
    return { address: found.address, family: found.family === 6 ? 6 : 4 };
  } catch (err) {
    throw new TransientError(`cannot resolve the DNS server name ${host}: ${(err as Error).message}`, undefined, { cause: err });
  }
}

function udp(server: DnsServer, target: { address: string; family: 4 | 6 }, wire: Buffer, timeoutMs: number): Promise<Buffer> {
  const id = wire.readUInt16BE(0);
  return new Promise((resolve, reject) => {
    const socket = createSocket(target.family === 6 ? 'udp6' : 'udp4');
    const done = (err: Error | null, answer?: Buffer) => {
      clearTimeout(timer);
      socket.close();
      if (err) reject(err);
      else resolve(answer!);
    };
    const timer = setTimeout(
      () => done(new TransientError(`no answer from the DNS server ${server.host}:${server.port} (UDP) within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.on('error', (err) => done(new TransientError(`DNS server ${server.host}:${server.port} (UDP): ${err.message}`, undefined, { cause: err })));
    socket.on('message', (msg, rinfo) => {
      // Only an answer from the server, to this message: anything else is ignored (a stray or spoofed datagram).
      if (rinfo.address !== target.address || rinfo.port !== server.port || msg.length < 12 || msg.readUInt16BE(0) !== id) return;
      done(null, msg);
    });
    socket.connect(server.port, target.address, () => socket.send(wire));
  });
}

function tcp(server: DnsServer, target: { address: string }, wire: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target.address, port: server.port });
    let received = Buffer.alloc(0);
    const done = (err: Error | null, answer?: Buffer) => {
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(answer!);
    };
    const timer = setTimeout(
      () => done(new TransientError(`no answer from the DNS server ${server.host}:${server.port} (TCP) within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.on('error', (err) => done(new TransientError(`DNS server ${server.host}:${server.port} (TCP): ${err.message}`, undefined, { cause: err })));
    socket.on('connect', () => {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(wire.length);
      socket.write(Buffer.concat([length, wire]));
    });
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= 2 && received.length >= 2 + received.readUInt16BE(0)) done(null, received.subarray(2, 2 + received.readUInt16BE(0)));
    });
    socket.on('end', () => done(new TransientError(`the DNS server ${server.host}:${server.port} closed the TCP connection without an answer`)));
  });
}

/** Sends `wire` and answers the server's reply (its ID matching). */
export async function exchange(server: DnsServer, wire: Buffer, timeoutMs: number): Promise<Buffer> {
  const target = await addressOf(server.host);
  if (wire.length > UDP_LIMIT) return tcp(server, target, wire, timeoutMs);
  const answer = await udp(server, target, wire, timeoutMs);
  const truncated = (answer.readUInt16BE(2) & 0x0200) !== 0;
  return truncated ? tcp(server, target, wire, timeoutMs) : answer;
}
