// What the Lambda HTTP handler refuses before Hono's adapter sees it: an
// event that is not an object (null, a string: the adapter throws a
// TypeError on it), one without a requestContext or a method (the adapter
// ran it as a GET), a path that is none (missing: served as "/") or holds a
// backslash (which `workhorse serve` refuses), headers or REST API query
// parameters it would throw on, and a body marked base64 that is not (the adapter's
// decoder throws, and the answer is a plain-text 500). The adapter treats
// any truthy `isBase64Encoded` (the string "true" included) as base64, so
// the check does too. Anything else the adapter cannot turn into a request
// (a header name it refuses, multiValueHeaders that are not arrays) it
// answers with a plain-text "Invalid request"; that answer is
// rewritten here as the same 400. A body on a GET or HEAD is dropped before
// the adapter sees it, as the server ignores one. So no input to the
// handler is answered 500 or outside the API's error shape.
import { ERROR_HEADERS, errorBody } from './clientErrors.js';

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
    headers: { ...ERROR_HEADERS },
    body: errorBody('bad_request', message),
    isBase64Encoded: false,
  };
}

interface LambdaEventShape {
  requestContext?: unknown;
  httpMethod?: unknown;
  rawPath?: unknown;
  path?: unknown;
  headers?: unknown;
  multiValueHeaders?: unknown;
  queryStringParameters?: unknown;
  multiValueQueryStringParameters?: unknown;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[\r\n\0]/;

/**
 * What makes an event no HTTP request: no requestContext, or no method
 * (requestContext.http.method for a function URL or an HTTP API, httpMethod
 * for a REST API or an ALB: the adapter took a missing one for GET and ran
 * the route), or headers the adapter would throw on (it logs the stack
 * before answering). Undefined when none.
 */
function shapeProblem(e: LambdaEventShape): string | undefined {
  const ctx = e.requestContext;
  if (typeof ctx !== 'object' || ctx === null) return 'the event has no requestContext: it is not an HTTP event (a function URL, API Gateway or ALB event)';
  // The adapter reads a payload 2.0 event (rawPath and requestContext.http both present) by rawPath and
  // http.method, any other by path and httpMethod.
  const v2 = Object.hasOwn(e, 'rawPath') && Object.hasOwn(ctx, 'http') && !Object.hasOwn(ctx, 'elb');
  const http = (ctx as { http?: { method?: unknown } }).http;
  const method = v2 ? http?.method : e.httpMethod;
  if (typeof method !== 'string' || !TOKEN.test(method)) {
    return 'the event names no HTTP method (requestContext.http.method for a function URL or HTTP API, httpMethod for a REST API or ALB)';
  }
  // A missing path was served as "/", and a backslash in it (which `workhorse serve` refuses) was taken as a separator.
  const path = v2 ? e.rawPath : e.path;
  const pathField = v2 ? 'rawPath' : 'path';
  if (typeof path !== 'string' || !path.startsWith('/')) return `the event's ${pathField} is not a path (it starts with "/")`;
  if (path.includes('\\')) return `the event's ${pathField} has a backslash: it is not a path`;
  if (!v2) {
    const query = queryProblem(e);
    if (query) return query;
  }
  for (const [field, multi] of [['headers', false], ['multiValueHeaders', true]] as const) {
    const headers = e[field];
    if (headers === undefined || headers === null) continue;
    if (typeof headers !== 'object' || Array.isArray(headers)) return `the event's ${field} is not an object`;
    for (const [name, value] of Object.entries(headers)) {
      if (multi && !Array.isArray(value)) return `the event's multiValueHeaders["${name.slice(0, 100)}"] is not an array`;
      const values: unknown[] = multi ? (value as unknown[]) : [value];
      if (!TOKEN.test(name)) return `the event has a header name that is not one (${JSON.stringify(name.slice(0, 100))})`;
      if (values.some((v) => typeof v !== 'string' || BAD_VALUE.test(v))) return `the event's header "${name}" has a value that is not a header value`;
    }
  }
  return undefined;
}

/**
 * REST API and ALB query parameters the adapter would throw on
 * (`values.map is not a function`, its stack logged) or turn into text
 * nobody sent: multiValueQueryStringParameters whose values are not arrays
 * of strings, queryStringParameters whose values are not strings.
 */
function queryProblem(e: LambdaEventShape): string | undefined {
  for (const [field, multi] of [['queryStringParameters', false], ['multiValueQueryStringParameters', true]] as const) {
    const params = e[field];
    if (params === undefined || params === null) continue;
    if (typeof params !== 'object' || Array.isArray(params)) return `the event's ${field} is not an object`;
    for (const [name, value] of Object.entries(params)) {
      if (value === undefined || value === null) continue;
      const values: unknown = multi ? value : [value];
      if (!Array.isArray(values)) return `the event's multiValueQueryStringParameters["${name.slice(0, 100)}"] is not an array`;
      if (values.some((v) => typeof v !== 'string')) return `the event's ${field}["${name.slice(0, 100)}"] has a value that is not a string`;
    }
  }
  return undefined;
}

/** The answer to an event the adapter cannot read, or undefined when it can. */
export function refusedEvent(event: unknown): RefusedEvent | undefined {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    return refused(`the event is ${event === null ? 'null' : Array.isArray(event) ? 'an array' : `a ${typeof event}`}, not an HTTP event (a function URL, API Gateway or ALB event)`);
  }
  const shape = shapeProblem(event as LambdaEventShape);
  if (shape) return refused(shape);
  const { body, isBase64Encoded } = event as { body?: unknown; isBase64Encoded?: unknown };
  if (isBase64Encoded && body && (typeof body !== 'string' || !BASE64.test(body.replace(/\s+/g, '')))) {
    return refused('the event body is marked isBase64Encoded but is not base64');
  }
  return undefined;
}

/**
 * The event as the adapter should see it: a GET or HEAD carries no body
 * (a Request with one cannot be built: the adapter logged a TypeError's
 * stack and answered "Invalid request"), so its body is left out, as
 * `workhorse serve` ignores one. Other events are returned as they are.
 */
export function withoutGetBody<E>(event: E): E {
  const e = event as { body?: unknown; httpMethod?: unknown; requestContext?: { http?: { method?: unknown } } };
  if (e.body === undefined || e.body === null || e.body === '') return event;
  const method = e.requestContext?.http === undefined ? e.httpMethod : e.requestContext.http.method;
  if (typeof method !== 'string' || !/^(GET|HEAD)$/i.test(method)) return event;
  return { ...event, body: null, isBase64Encoded: false };
}

/** The adapter's own answers when it could not build a request from the event (hono/aws-lambda). */
const ADAPTER_FAILURES = new Set(['400 Invalid request', '500 Internal Server Error']);

/**
 * The 400 for an answer the adapter made itself because it could not read
 * the event (plain text; the app answers only JSON), or undefined for an
 * answer of the app.
 */
export function adapterRefusal(result: { statusCode?: number; body?: string; headers?: Record<string, unknown>; multiValueHeaders?: Record<string, unknown> }): RefusedEvent | undefined {
  if (!ADAPTER_FAILURES.has(`${result.statusCode} ${result.body}`)) return undefined;
  const type = result.headers?.['content-type'] ?? (result.multiValueHeaders?.['content-type'] as unknown[] | undefined)?.[0];
  if (typeof type !== 'string' || !type.startsWith('text/plain')) return undefined;
  return refused('the event could not be read as an HTTP request (its method, path, headers, query parameters or body are malformed)');
}
