/** What a fake provider records of each request, and what it answers to a generation. */
import type http from 'node:http';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: unknown;
}

/** What a successful generation answers: text and the protocol's own usage object. */
export interface FakeReply {
  text: string;
  usage?: Record<string, unknown>;
}
