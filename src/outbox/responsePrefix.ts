// Reading a webhook's answer without trusting its size. A failed delivery's
// message quotes the start of the receiver's body, and a success needs no body
// at all, so the sink reads at most a few KB and cancels the rest: reading the
// body whole (res.text()) buffered whatever the receiver sent, a huge or
// endless answer included, in the worker's memory until the timeout.

/** How much of a receiver's body a failure message may quote from. */
export const RESPONSE_PREFIX_BYTES = 4096;

/** Drops a response's body unread; the connection is closed if more was coming. */
export async function discardBody(res: Response): Promise<void> {
  await res.body?.cancel().catch(() => undefined);
}

/**
 * The first `maxBytes` of a response's body as text (less if the body ends
 * sooner, or fails or is aborted part way), the rest cancelled unread.
 */
export async function readBodyPrefix(res: Response, maxBytes = RESPONSE_PREFIX_BYTES): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      const part = value.byteLength > maxBytes - size ? value.subarray(0, maxBytes - size) : value;
      chunks.push(part);
      size += part.byteLength;
    }
  } catch {
    // What arrived before the failure is still worth quoting.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
