import { brokerUrls, redactUrl, UrlRotation, withHeartbeat } from './failover';

const A = 'amqp://guest:guest@127.0.0.1:5681';
const B = 'amqp://guest:guest@127.0.0.1:5682';
const C = 'amqp://guest:guest@127.0.0.1:5683';

describe('broker URLs', () => {
  it('one URL, or a cluster node list separated by commas (blanks ignored)', () => {
    expect(brokerUrls(A)).toEqual([A]);
    expect(brokerUrls(` ${A}, ${B},,${C} `)).toEqual([A, B, C]);
    expect(() => brokerUrls(' , ')).toThrow('broker URL is empty');
  });

  it('each connect attempt takes the next node, round and round, from the first given', () => {
    const rotation = new UrlRotation(`${A},${B},${C}`, 1);
    expect(Array.from({ length: 5 }, () => rotation.take())).toEqual([B, C, A, B, C]);
    expect(new UrlRotation(A).take()).toBe(A);
  });

  it('logs name the node without its credentials', () => {
    expect(redactUrl(A)).toBe('amqp://127.0.0.1:5681');
  });

  it('a 5 s heartbeat unless the URL sets its own: a silent node is given up after 10-15 s, not 20-30 s', () => {
    expect(withHeartbeat(A)).toBe(`${A}?heartbeat=5`);
    expect(withHeartbeat(A, 10)).toBe(`${A}?heartbeat=10`);
    expect(withHeartbeat(`${A}/pack?frameMax=8192`, 10)).toBe(`${A}/pack?frameMax=8192&heartbeat=10`);
    expect(withHeartbeat(`${A}?heartbeat=30`, 10)).toBe(`${A}?heartbeat=30`);
  });
});
