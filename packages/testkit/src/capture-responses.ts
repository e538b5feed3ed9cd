import { currentTest, isStaticAsset, LEAK_SCAN_DIR_ENV, recordForScan } from './scan-record';
import { stopStackCollector } from './traces';

/**
 * jest setup file (setupFilesAfterEnv of the root config): while the suite-wide leak scan runs
 * (LEAK_SCAN_DIR_ENV set by the global set-up), every HTTP response test code receives through
 * `fetch` (testkit's `call`, every stack and harness, and tests that fetch directly) is recorded
 * for the scan, read or not by the test: a copy of its body is read to the end in the
 * background. Responses to requests product code makes in the same process (a service calling
 * another, or a provider) are left out: no user reads them. So are answers to a request signed as
 * one of the platform's own services (systemPrincipal: the internal plaintext settings read, which
 * is there to hand secrets to services), event streams (they never end) and static files
 * (isStaticAsset).
 */
const original = globalThis.fetch;
const dir = process.env[LEAK_SCAN_DIR_ENV];

/** The files of the functions on the stack above the caller of this (raw call sites: no source-map lookup). */
function callerFiles(): string[] {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as it was, never called here
  const prepare = Error.prepareStackTrace;
  const holder: { stack?: NodeJS.CallSite[] } = {};
  try {
    Error.prepareStackTrace = (_error, sites) => sites;
    Error.captureStackTrace(holder, capturedFetch);
    return (holder.stack ?? []).map((site) => site.getFileName() ?? '');
  } finally {
    Error.prepareStackTrace = prepare;
  }
}

/**
 * True when the first code of ours that called fetch is a test's (a test file, a test helper,
 * testkit), not a service's (src/ of a service or package) nor only a library's.
 */
function calledByTest(files: string[]): boolean {
  const caller = files.find((file) => file.startsWith('/') && !file.includes('/node_modules/'));
  if (!caller) return false;
  return !/\/(?:services|packages)\/[^/]+\/src\//.test(caller) || caller.includes('/packages/testkit/src/');
}

/** Who the request speaks as: a signed principal (PRINCIPAL_HEADER of @pack/http-kit), a token, or no one. */
function callerOf(input: string | URL | Request, init?: RequestInit): string {
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  const principal = headers.get('x-pack-principal');
  if (principal) {
    try {
      const { username, role } = JSON.parse(Buffer.from(principal, 'base64url').toString()) as Record<
        string,
        string
      >;
      return `${role} ${username}`;
    } catch {
      return 'a malformed principal';
    }
  }
  return headers.has('authorization') ? 'a token' : 'no one';
}

async function capturedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const byTest = calledByTest(callerFiles());
  const { file, test } = currentTest();
  const caller = callerOf(input, init);
  const response = await original(input, init);
  if (!byTest || caller.startsWith('admin system:')) return response;
  const contentType = response.headers.get('content-type');
  if (contentType?.includes('text/event-stream') || isStaticAsset(contentType)) return response;
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  const url = input instanceof Request ? input.url : String(input);
  response
    .clone()
    .text()
    .then(
      (body) =>
        recordForScan('responses', { file, test, caller, method, url, status: response.status, body }),
      () => undefined,
    );
  return response;
}

if (dir) globalThis.fetch = capturedFetch;

// A stack's tracing (traces.ts) ends with its test file: its spans are exported for the scans.
afterAll(() => stopStackCollector());
