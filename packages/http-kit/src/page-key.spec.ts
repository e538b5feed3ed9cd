import { decodeKey, encodeKey, keyPattern, type KeyShape } from './page-key';
import { listQuery, listQuerySchema, pageRequest } from './pagination';

const ID: KeyShape = ['int'];
const TIME_AND_ID: KeyShape = ['date', 'string'];

describe('page keys (after=<key of the last item seen>)', () => {
  it('writes an id as itself and a time with a string id as milliseconds.base64url', () => {
    expect(encodeKey(ID, [42])).toBe('42');
    const at = new Date('2026-12-06T10:00:00.123Z');
    expect(encodeKey(TIME_AND_ID, [at, 'msg_1'])).toBe(`${at.getTime()}.bXNnXzE`);
    expect(decodeKey(TIME_AND_ID, `${at.getTime()}.bXNnXzE`)).toEqual([at, 'msg_1']);
  });

  it.each([0, 1, 999_999, Number.MAX_SAFE_INTEGER])('reads back the id %d', (id) => {
    expect(decodeKey(ID, encodeKey(ID, [id]))).toEqual([id]);
  });

  it.each([' ', 'Zm9v', 'é', 'a.b', '\u{1f600}', 'x'.repeat(200)])('reads back the string %j', (text) => {
    const key = encodeKey(TIME_AND_ID, [new Date(0), text]);
    expect(decodeKey(TIME_AND_ID, key)).toEqual([new Date(0), text]);
  });

  it.each([
    '+5',
    '-5',
    '05',
    '5.0',
    '1e3',
    '0x10',
    ' 5',
    '5 ',
    '',
    '99999999999999999', // 17 digits
    '99999999999999999999',
    'garbage',
    '__proto__',
    'constructor',
    'toString',
    '5.5',
    'NaN',
    'Infinity',
  ])('refuses %j as an id key', (text) => {
    expect(decodeKey(ID, text)).toBeUndefined();
  });

  it.each([
    '1.', // no string part
    '.bXNn',
    '1',
    '1.bXNn.bXNn',
    '1.bXNn=', // padding: not the one spelling
    '1.bXN+', // the other base64 alphabet
    '1./w', // the other base64 alphabet
    '8640000000000001.bXNn', // past the last date
    '-1.bXNn',
    `1.${'A'.repeat(345)}`,
  ])('refuses %j as a time-and-id key', (text) => {
    expect(decodeKey(TIME_AND_ID, text)).toBeUndefined();
  });

  it('takes every text of the documented pattern: a key is a position, not a reference', () => {
    expect(keyPattern(ID)).toBe('^(0|[1-9][0-9]{0,15})$');
    expect(decodeKey(ID, '9999999999999999')).toEqual([1e16]);
    expect(decodeKey(TIME_AND_ID, '999999999999999.bXNnXzF')).toEqual([new Date(999999999999999), 'msg_1']);
    expect(decodeKey(TIME_AND_ID, '1._w')).toEqual([new Date(1), '\ufffd']); // not UTF-8: a position all the same
    for (const text of ['+5', '1.', '1.bXNn=', `1.${'A'.repeat(345)}`])
      expect(new RegExp(keyPattern(TIME_AND_ID)).test(text)).toBe(false);
  });

  it('refuses a bad after in the query, naming after; a key with an offset skips from the key', () => {
    const parsed = listQuerySchema.safeParse({ after: '+5' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['after']);
    expect(listQuery({ shape: TIME_AND_ID }).safeParse({ after: '17' }).success).toBe(false);
    expect(listQuerySchema.parse({ after: '17' })).toEqual({ limit: 50, offset: 0, after: [17] });
    expect(pageRequest({ limit: 10, offset: 20, after: [17] })).toEqual({
      limit: 11,
      start: { after: [17], offset: 20 },
    });
    expect(pageRequest({ limit: 10, offset: 20 })).toEqual({ limit: 11, start: { offset: 20 } });
  });
});
