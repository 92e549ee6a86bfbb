// Requests Node's HTTP parser refuses before the app sees them: a malformed
// request line or header, a bad Content-Length, an unknown method, headers
// over the size limit, a request that took too long to arrive. Left to
// itself Node answers those with a bare status and no body; here they get
// the API's one error shape, `{ error: { code, message } }`, with the
// status Node would have used (431 for headers too large, 413 for chunk
// extensions too large, 408 for a request timeout, 400 otherwise), and the
// connection is closed, as Node closes it. The same goes for requests Node
// parses but the adapter cannot turn into a fetch Request (a Host header
// that is not a host, a backslash in the path, `OPTIONS *`): a 400 in the
// same shape instead of the adapter's empty one; and an HTTP/1.1 request
// with no Host header, which Node would refuse with an empty 400 itself
// (the server is made with requireHostHeader off so that it reaches here).
// A CONNECT request (a proxy's tunnel), which Node hands to a 'connect'
// listener and otherwise closes without a word, is a 405 in the same shape.
// Each carries the headers every API response does (no-store, nosniff).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

interface ClientErrorSource {
  on(event: 'clientError', listener: (err: Error & { code?: string }, socket: Duplex) => void): unknown;
}

const BY_CODE: Record<string, { status: number; reason: string; code: string; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, reason: 'Request Header Fields Too Large', code: 'headers_too_large', message: 'the request headers are larger than the server accepts' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, reason: 'Payload Too Large', code: 'payload_too_large', message: 'the chunk extensions are larger than the server accepts' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, reason: 'Request Timeout', code: 'request_timeout', message: 'the request did not arrive in time' },
};

/** The headers of an error answered before any route runs: JSON, never cached, never sniffed (as every API response: middleware/apiHeaders.ts). */
export const ERROR_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } as const;

/** A raw HTTP/1.1 error response that closes the connection, with ERROR_HEADERS. */
function rawErrorResponse(status: number, reason: string, body: string): string {
  const head = Object.entries(ERROR_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return `HTTP/1.1 ${status} ${reason}\r\n${head}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** The API's one error shape, `{ error: { code, message } }`, as the text of a body. */
export function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** The raw HTTP response for a request the parser refused. */
export function clientErrorResponse(err: Error & { code?: string }): string {
  const known = err.code ? BY_CODE[err.code] : undefined;
  const { status, reason, code, message } = known ?? {
    status: 400,
    reason: 'Bad Request',
    code: 'bad_request',
    message: `the request is not valid HTTP/1.1${err.code ? ` (${err.code})` : ''}`,
  };
  return rawErrorResponse(status, reason, errorBody(code, message));
}

/** Answers the parser's refusals on `server` in the API's error shape. */
export function answerClientErrors(server: ClientErrorSource): void {
  server.on('clientError', (err, socket) => {
    // A connection reset or already written to: there is nobody to answer.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(err));
  });
}

interface ConnectSource {
  on(event: 'connect', listener: (req: IncomingMessage, socket: Duplex) => void): unknown;
}

/** Answers CONNECT requests on `server` with a 405 in the API's error shape: this server is not a proxy. */
export function answerConnect(server: ConnectSource): void {
  server.on('connect', (_req, socket) => {
    const body = errorBody('method_not_allowed', 'CONNECT is not served here: this is not a proxy');
    socket.on('error', () => undefined);
    // Destroyed once written: a client that never closes its side must not hold the socket (nor a server's close).
    socket.end(rawErrorResponse(405, 'Method Not Allowed', body), () => socket.destroy());
  });
}

/** The response to a request the Node adapter could not build (its RequestError), in the API's error shape. */
export function requestErrorResponse(err: unknown): Response {
  const detail = err instanceof Error && err.message ? ` (${err.message.slice(0, 200)})` : '';
  return new Response(errorBody('bad_request', `the request cannot be read${detail}`), {
    status: 400,
    headers: { ...ERROR_HEADERS, connection: 'close' },
  });
}

/** Answers an HTTP/1.1 request without a Host header (RFC 9112: a 400) in the API's error shape; false when it has one. */
export function refusedMissingHost(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.httpVersion !== '1.1' || req.headers.host !== undefined) return false;
  const body = errorBody('bad_request', 'an HTTP/1.1 request must carry a Host header');
  res.writeHead(400, { ...ERROR_HEADERS, 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
  return true;
}
