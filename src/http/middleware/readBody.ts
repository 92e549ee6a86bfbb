// Reads the request body once, enforcing the documented size limit while it
// streams (a Content-Length over the limit is refused before reading), and
// keeps the exact bytes for the signature check and the JSON parser.
import type { MiddlewareHandler } from 'hono';
import type { HttpEnv } from '../env.js';
import { errorResponse } from './errorHandler.js';

function tooLarge(c: Parameters<MiddlewareHandler<HttpEnv>>[0], limit: number): Response {
  return errorResponse(c, 413, { code: 'body_too_large', message: `request body is over the limit of ${limit} bytes` });
}

export function readBody(limit: number): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const declared = c.req.header('content-length');
    if (declared !== undefined && /^[0-9]+$/.test(declared) && Number(declared) > limit) return tooLarge(c, limit);
    const stream = c.req.raw.body;
    if (!stream) {
      c.set('rawBody', new Uint8Array(0));
      return next();
    }
    const reader = stream.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > limit) {
        await reader.cancel().catch(() => undefined);
        return tooLarge(c, limit);
      }
      chunks.push(value);
    }
    const body = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      body.set(chunk, offset);
      offset += chunk.length;
    }
    c.set('rawBody', body);
    return next();
  };
}
