// What the Lambda HTTP handler refuses before Hono's adapter sees it: an
// event that is not an object (null, a string: the adapter throws a
// TypeError on it), and a body marked base64 that is not (the adapter's
// decoder throws, and the answer is a plain-text 500). Each is a 400 in the
// API's error shape, so no input to the handler is answered 500.
export interface RefusedEvent {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: false;
}

/** Standard base64 with its padding, as API Gateway and function URLs send it. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function refused(message: string): RefusedEvent {
  return {
    statusCode: 400,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ error: { code: 'bad_request', message } }),
    isBase64Encoded: false,
  };
}

/** The answer to an event the adapter cannot read, or undefined when it can. */
export function refusedEvent(event: unknown): RefusedEvent | undefined {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    return refused(`the event is ${event === null ? 'null' : Array.isArray(event) ? 'an array' : `a ${typeof event}`}, not an HTTP event (a function URL, API Gateway or ALB event)`);
  }
  const { body, isBase64Encoded } = event as { body?: unknown; isBase64Encoded?: unknown };
  if (isBase64Encoded === true && typeof body === 'string' && !BASE64.test(body.replace(/\s+/g, ''))) {
    return refused('the event body is marked isBase64Encoded but is not base64');
  }
  return undefined;
}
