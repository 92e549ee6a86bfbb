// Requests with an `Expect` header other than `100-continue`. Node answers
// them itself, before any route runs, with a bare `417 Expectation Failed`
// and no body; here they get the API's one error shape instead,
// `{ error: { code: "expectation_failed", message } }`, with the same 417.
// `Expect: 100-continue` is not touched: Node sends `100 Continue` and the
// request reaches the app as usual.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ERROR_HEADERS, errorBody } from './clientErrors.js';

interface ExpectationSource {
  on(event: 'checkExpectation', listener: (req: IncomingMessage, res: ServerResponse) => void): unknown;
}

/** The JSON body of the 417 for an `Expect` value the server cannot meet. */
export function expectationFailedBody(expect: string | undefined): string {
  const shown = (expect ?? '').slice(0, 100);
  return errorBody('expectation_failed', `the server cannot meet "Expect: ${shown}": it supports only "Expect: 100-continue"`);
}

/** Answers requests whose `Expect` is not `100-continue` on `server` with a 417 in the API's error shape. */
export function answerUnmetExpectations(server: ExpectationSource): void {
  server.on('checkExpectation', (req, res) => {
    const body = expectationFailedBody(req.headers.expect);
    res.writeHead(417, { ...ERROR_HEADERS, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}
