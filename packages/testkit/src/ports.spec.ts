import { readFileSync } from 'node:fs';
import { freePort } from './ports';

describe('freePort', () => {
  it('gives a port outside the kernel ephemeral range, so no outgoing connection takes it before the server binds', async () => {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) expect(port).toBeLessThan(low!);
    expect(new Set(ports).size).toBe(20);
  });
});
