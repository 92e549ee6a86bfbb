// Reads a request body once, after its credentials passed the header checks:
// under the size limit (a Content-Length over it is refused before reading),
// under a time limit, and with at most `maxConcurrent` bodies being read at
// once (over the cap the answer is 503 with Retry-After, so slow or hostile
// clients cannot make the server buffer without bound). The exact bytes are
// kept for the signature check and the JSON parser. A client that goes away
// mid-body is a ClientGoneError, which the error handler does not log.
import type { Context } from 'hono';
import { ClientGoneError } from './clientGoneError.js';
import type { HttpEnv } from './env.js';
import { errorResponse } from './middleware/errorHandler.js';

export interface BodyLimits {
  maxBytes: number;
  /** Bodies read at the same time, across all requests. */
  maxConcurrent: number;
  /** A body that takes longer than this to arrive is refused with 408. */
  timeoutMs: number;
}

const RETRY_AFTER_SEC = 1;

/**
 * Bodies of signed requests read at the same time, out of `maxBodyReads`: a
 * quarter of it (at least 1), in slots of their own, since anyone can send
 * a signature that only the body's MAC check will refuse.
 */
export function signedBodyReads(maxBodyReads: number): number {
  return Math.max(1, Math.floor(maxBodyReads / 4));
}
const EMPTY = new Uint8Array(0);

function tooLarge(c: Context<HttpEnv>, limit: number): Response {
  return errorResponse(c, 413, { code: 'body_too_large', message: `request body is over the limit of ${limit} bytes` });
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.length;
  }
  return body;
}

export class BodyReader {
  private active = 0;

  constructor(private readonly limits: BodyLimits) {}

  /** Sets `rawBody`; returns the refusal to send instead, if any. */
  async read(c: Context<HttpEnv>): Promise<Response | undefined> {
    const { maxBytes } = this.limits;
    const declared = c.req.header('content-length');
    if (declared !== undefined && /^[0-9]+$/.test(declared) && Number(declared) > maxBytes) return tooLarge(c, maxBytes);
    const stream = c.req.raw.body;
    // No body (or one declared empty: a body-less POST from fetch) takes no slot: the slots bound the
    // bodies being waited for, and an operator's pause must not queue behind slow uploads.
    if (!stream || declared === '0') {
      c.set('rawBody', EMPTY);
      return undefined;
    }
    if (this.active >= this.limits.maxConcurrent) {
      await stream.cancel().catch(() => undefined);
      c.header('Retry-After', String(RETRY_AFTER_SEC));
      return errorResponse(c, 503, { code: 'busy', message: 'too many request bodies are being read; retry shortly' });
    }
    this.active++;
    try {
      return await this.readStream(c, stream);
    } finally {
      this.active--;
    }
  }

  private async readStream(c: Context<HttpEnv>, stream: ReadableStream<Uint8Array>): Promise<Response | undefined> {
    const { maxBytes, timeoutMs } = this.limits;
    const reader = stream.getReader();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      for (;;) {
        let step: Awaited<ReturnType<typeof reader.read>> | 'timeout';
        try {
          step = await Promise.race([reader.read(), timedOut]);
        } catch (err) {
          throw new ClientGoneError(err);
        }
        if (step === 'timeout') {
          await reader.cancel().catch(() => undefined);
          return errorResponse(c, 408, { code: 'body_timeout', message: `the request body did not arrive within ${timeoutMs} ms` });
        }
        if (step.done) break;
        size += step.value.length;
        if (size > maxBytes) {
          await reader.cancel().catch(() => undefined);
          return tooLarge(c, maxBytes);
        }
        chunks.push(step.value);
      }
    } finally {
      clearTimeout(timer);
    }
    c.set('rawBody', concat(chunks, size));
    return undefined;
  }
}
