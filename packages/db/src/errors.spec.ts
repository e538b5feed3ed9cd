import { mongo } from 'mongoose';
import { ServiceUnavailableError } from '@pack/errors';
import { isDatabaseUnavailable, mapDatabaseError } from './errors';

/** A server error as the driver builds it from a reply. */
const serverError = (code: number, errmsg = 'x') => new mongo.MongoServerError({ ok: 0, code, errmsg });

describe('telling a database that is away from a request that is wrong', () => {
  it('FerretDB reporting its PostgreSQL down (InternalError, code 1), a refused connection, a write to a closed socket: unavailable, answered 503 with Retry-After', () => {
    const cases = [
      serverError(1, 'failed to connect to `user=pack database=ferretdb`'),
      new mongo.MongoNetworkError('connect ECONNREFUSED 127.0.0.1:27017'),
      Object.assign(new Error('This socket has been ended by the other party'), { code: 'EPIPE' }),
      Object.assign(new Error('Timed out during server selection'), { name: 'MongoOperationTimeoutError' }),
    ];
    for (const error of cases) {
      expect(isDatabaseUnavailable(error)).toBe(true);
      const mapped = mapDatabaseError(error);
      expect(mapped).toBeInstanceOf(ServiceUnavailableError);
      expect(mapped?.headers).toEqual({ 'retry-after': '5' });
    }
  });

  it('a bulk write cut off by the connection is unavailable through the failure it carries', () => {
    const bulk = Object.assign(new Error('connection 2 closed'), {
      name: 'MongoBulkWriteError',
      errorResponse: new mongo.MongoNetworkError('connection 2 closed'),
    });
    expect(isDatabaseUnavailable(bulk)).toBe(true);
  });

  it('a duplicate key is a 409, a bad query or a plain bug is neither', () => {
    expect(isDatabaseUnavailable(serverError(11000))).toBe(false);
    expect(mapDatabaseError(serverError(11000))?.status).toBe(409);
    expect(isDatabaseUnavailable(serverError(2, 'BadValue'))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false);
    expect(mapDatabaseError(new TypeError('x is undefined'))).toBeUndefined();
  });
});
