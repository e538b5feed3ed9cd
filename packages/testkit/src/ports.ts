import { randomInt } from 'node:crypto';
import net from 'node:net';

/**
 * Ports handed to servers a test starts as other processes are taken below the kernel's
 * ephemeral range (net.ipv4.ip_local_port_range, 32768-60999 by default) and above the well-known
 * ones. A port the kernel handed out for `listen(0)` and got back is free for anyone again: the
 * next `listen(0)` of any process of the run (every in-process service and fake of every worker
 * listens on port 0, hundreds of times a file) or an outgoing connection may be given it before a
 * server that takes seconds to bind (a JVM) binds it, and that server then fails to start. No
 * `listen(0)` or outgoing connection is given a port below the range. The range also stays clear
 * of the servers' own fixed ports (RabbitMQ's 25672, the test cluster's 256xx, 27017).
 */
const FIRST = 10_000;
const END = 25_000;
/** Jest workers draw from slices of their own, so two workers never pick one port. */
const SLICES = 8;
const SLICE = Math.floor((END - FIRST) / SLICES);

const worker = Number(process.env.JEST_WORKER_ID) || (process.pid % SLICES) + 1;
const sliceStart = FIRST + ((worker - 1) % SLICES) * SLICE;
/** Where this process goes on in its slice: a fresh start per process, ports used in turn. */
let cursor = randomInt(SLICE);

const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

/** A loopback port nobody listens on right now, that no outgoing connection will be given. */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried < SLICE; tried++) {
    const port = sliceStart + (cursor++ % SLICE);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free loopback port in ${sliceStart}-${sliceStart + SLICE - 1}`);
}
