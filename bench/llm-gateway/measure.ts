import { readFileSync } from 'node:fs';
import type { ConfirmChannel } from 'amqplib';
import { Pool } from 'undici';
import type { Envelope } from '@pack/contracts';

export interface Figures {
  calls: number;
  callsPerSecond: number;
  /** End-to-end latency per call, ms. */
  p50: number;
  p99: number;
  errors: number;
}

/**
 * Runs `call` for `seconds` with `concurrency` calls in flight (after `warmup` calls that are not
 * counted) and reports throughput and latency percentiles.
 */
export async function drive(
  call: () => Promise<void>,
  concurrency: number,
  seconds: number,
  warmup = 50,
): Promise<Figures> {
  for (let i = 0; i < warmup; i += 1) await call();
  const times: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const began = performance.now();
      try {
        await call();
        times.push(performance.now() - began);
      } catch {
        errors += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
  return { calls: times.length, callsPerSecond: times.length / elapsed, p50: at(0.5), p99: at(0.99), errors };
}

/** Resident set size of a process in MB (VmRSS), or NaN when it cannot be read. */
export function rssMb(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)/m.exec(status)?.[1];
    return kb ? Number(kb) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Database commands a service sent so far: all of them, and the writes (insert, update) alone. */
export async function dbCommands(url: string): Promise<{ all: number; writes: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let all = 0;
  let writes = 0;
  for (const m of text.matchAll(/^db_commands_total\{command="(\w+)"[^}]*\} (\d+)/gm)) {
    all += Number(m[2]);
    if (m[1] === 'insert' || m[1] === 'update') writes += Number(m[2]);
  }
  return { all, writes };
}

/** CPU time (user + system) a process has used so far, in ms; NaN when it cannot be read. */
export function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    // Fields after the command name (which may hold spaces): utime and stime are 14th and 15th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

/** Publishes an event onto the namespace's exchange as a service would, resolving on the broker's confirm. */
export function publishConfirmed(
  channel: ConfirmChannel,
  exchange: string,
  envelope: Envelope,
): Promise<void> {
  return new Promise<void>((resolve, reject) =>
    channel.publish(
      exchange,
      envelope.type,
      Buffer.from(JSON.stringify(envelope)),
      { persistent: true, messageId: envelope.id, contentType: 'application/cloudevents+json' },
      (error) => (error ? reject(error as Error) : resolve()),
    ),
  );
}

const CHAT_BODY = JSON.stringify({ model: 'fake', messages: [{ role: 'user', content: 'Say hello.' }] });

/** An OpenAI-shape chat completion over HTTP, as the OpenAI client sends it. */
export function chatCaller(url: string, pathname: string, concurrency: number, key: string) {
  const pool = new Pool(url, { connections: concurrency });
  const call = async () => {
    const response = await pool.request({
      method: 'POST',
      path: pathname,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: CHAT_BODY,
    });
    await response.body.text();
    if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}`);
  };
  return { call, close: () => pool.close() };
}
