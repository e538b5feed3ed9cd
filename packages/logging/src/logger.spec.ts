import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import vm from 'node:vm';
import { createLogger, LOG_COPY_DIR_ENV } from './logger';
import { runWithContext } from './context';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  return { lines, logger: createLogger({ service: 'svc', version: '1.2.3', destination: stream }) };
}

const SECRET = 'sk-live-0123456789abcdefghijklmnop';

describe('logger', () => {
  it('writes JSON lines with service, version and the correlation id of the current work', () => {
    const { lines, logger } = capture();
    runWithContext({ correlationId: 'corr-1', requestId: 'req-1' }, () => logger.info({ a: 1 }, 'hello'));
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 'info',
      service: 'svc',
      version: '1.2.3',
      correlation_id: 'corr-1',
      request_id: 'req-1',
      msg: 'hello',
      a: 1,
    });
  });

  it('never lets a secret reach a log line, at any depth or inside message text', () => {
    const { lines, logger } = capture();
    logger.info(
      {
        req: { headers: { authorization: `Token ${SECRET}`, 'x-api-key': SECRET } },
        model: { extra_data: { api_key: SECRET, VENDOR1_API_KEY: SECRET, credentials: `Bearer ${SECRET}` } },
        settings: { ldap: { BIND_PASSWORD: SECRET }, oauth: { CLIENT_SECRET: SECRET, CLIENT_ID: SECRET } },
        list: [{ token: SECRET }],
      },
      `calling with Bearer ${SECRET}`,
    );
    logger.error({ err: new Error(`upstream refused Token ${SECRET}`) }, 'failed');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).not.toContain(SECRET);
    expect(lines[0]).toContain('[REDACTED]');
    expect(JSON.parse(lines[0]!).model.extra_data.api_key).toBe('[REDACTED]');
    // The error itself is still readable, with its secret removed.
    expect(JSON.parse(lines[1]!).err).toMatchObject({
      type: 'Error',
      message: 'upstream refused Token [REDACTED]',
      stack: expect.stringContaining('upstream refused'),
    });
  });

  it('writes an error made in another realm (Node internals seen from a vm context) with its message, not as {}', () => {
    const { lines, logger } = capture();
    const foreign = vm.runInNewContext(`new TypeError('fetch failed: Token ${SECRET}')`) as unknown;
    expect(foreign instanceof Error).toBe(false);
    logger.warn({ err: foreign }, 'upstream unavailable');
    expect(JSON.parse(lines[0]!).err).toMatchObject({
      type: 'TypeError',
      message: 'fetch failed: Token [REDACTED]',
    });
  });

  it('redacts a secret 20 levels deep, through arrays and error causes', () => {
    const { lines, logger } = capture();
    let deep: Record<string, unknown> = { api_key: SECRET, note: `Bearer ${SECRET}` };
    for (let level = 0; level < 20; level += 1) deep = level % 5 === 4 ? { items: [deep] } : { level: deep };
    const cause = new Error('root', { cause: { config: { nested: { password: SECRET } } } });
    logger.info({ deep, err: new Error('outer', { cause }) }, 'deep');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(SECRET);
    let node = JSON.parse(lines[0]!).deep as Record<string, unknown>;
    let levels = 0;
    while (!('api_key' in node)) {
      node = ('items' in node ? (node.items as unknown[])[0] : node.level) as Record<string, unknown>;
      levels += 1;
    }
    expect(levels).toBe(20);
    expect(node).toEqual({ api_key: '[REDACTED]', note: 'Bearer [REDACTED]' });
    expect(JSON.parse(lines[0]!).err.cause.cause).toEqual({ config: { nested: { password: '[REDACTED]' } } });
  });

  it('writes an object that contains itself once, with its secret redacted and the loop marked', () => {
    const { lines, logger } = capture();
    const looped: Record<string, unknown> = { token: SECRET, name: 'loop' };
    looped.self = looped;
    const shared = { name: 'shared' };
    const error = new Error('cycle') as Error & { cause?: unknown };
    error.cause = error;
    logger.info({ looped, pair: [shared, shared], err: error }, 'cycle');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line.looped).toEqual({ token: '[REDACTED]', name: 'loop', self: '[Circular]' });
    expect(line.pair).toEqual([{ name: 'shared' }, { name: 'shared' }]);
    expect(line.err.cause).toBe('[Circular]');
  });
});

describe('the log copy of a test run (PACK_LOG_COPY_DIR)', () => {
  it('appends every line at debug level to log-<pid>.jsonl, redacted, while the destination keeps its own level', () => {
    const before = process.env[LOG_COPY_DIR_ENV];
    const dir = mkdtempSync(path.join(os.tmpdir(), 'log-copy-'));
    try {
      process.env[LOG_COPY_DIR_ENV] = dir;
      const lines: string[] = [];
      const destination = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
          callback();
        },
      });
      const logger = createLogger({ service: 'svc', version: '1', level: 'info', destination });
      logger.debug('detail');
      logger.info({ api_key: SECRET }, 'called');
      createLogger({ service: 'quiet', version: '1', level: 'silent' }).debug('quiet detail');
      expect(lines.map((line) => JSON.parse(line).msg)).toEqual(['called']);
      const copied = readFileSync(path.join(dir, `log-${process.pid}.jsonl`), 'utf8')
        .trim()
        .split('\n');
      expect(copied.map((line) => [JSON.parse(line).service, JSON.parse(line).msg])).toEqual([
        ['svc', 'detail'],
        ['svc', 'called'],
        ['quiet', 'quiet detail'],
      ]);
      expect(copied.join('\n')).not.toContain(SECRET);
    } finally {
      if (before === undefined) delete process.env[LOG_COPY_DIR_ENV];
      else process.env[LOG_COPY_DIR_ENV] = before;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
