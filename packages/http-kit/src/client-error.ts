import type { Duplex } from 'node:stream';
import type { Logger } from '@pack/logging';
import { PROBLEM_CONTENT_TYPE, problemType, type Problem } from './problem';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

function problemFor(code: string | undefined): Problem {
  if (code === 'HPE_HEADER_OVERFLOW')
    return {
      type: problemType('request_header_fields_too_large'),
      title: 'Request header fields too large',
      status: 431,
      detail: 'The request line and headers together exceed the size this server accepts.',
    };
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'ERR_HTTP_HEADERS_TIMEOUT')
    return {
      type: problemType('request_timeout'),
      title: 'Request timeout',
      status: 408,
      detail: 'The request was not received in time.',
    };
  return {
    type: problemType('bad_request'),
    title: 'Bad request',
    status: 400,
    detail: 'The request is not valid HTTP/1.1.',
  };
}

/**
 * The node server's 'clientError' handler: a request node cannot parse (an over-long request
 * line or headers, malformed HTTP) gets a problem+json answer like every other error, instead of
 * node's bare status line, and the connection is closed.
 */
export function answerClientError(logger: Logger) {
  return (error: Error & { code?: string }, socket: Duplex): void => {
    // A response already under way on this socket cannot be replaced by another one.
    const started = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage
      ?.headersSent;
    if (error.code === 'ECONNRESET' || !socket.writable || started) {
      socket.destroy();
      return;
    }
    const problem = problemFor(error.code);
    logger.info({ code: error.code, status: problem.status }, 'unparseable request refused');
    const body = JSON.stringify(problem);
    socket.end(
      `HTTP/1.1 ${problem.status} ${STATUS_TEXT[problem.status]}\r\n` +
        `content-type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        'connection: close\r\n\r\n' +
        body,
    );
  };
}
