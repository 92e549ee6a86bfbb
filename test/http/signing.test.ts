// The signing scheme on its own: what a signer produces, what the verifier
// accepts (current and next secret, within the tolerance) and refuses, and
// that the helper stands alone (no pg, no Node built-ins).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { signRequest, verifySignedRequest, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../src/signing/index.js';

const SECRET = 'current-secret-0123456789';
const NEXT = 'next-secret-0123456789abcdef';
const now = Math.floor(Date.now() / 1000);

async function verify(headers: Record<string, string>, over: Partial<Parameters<typeof verifySignedRequest>[0]> = {}) {
  return verifySignedRequest({
    secrets: [SECRET, NEXT],
    method: 'POST',
    path: '/tick',
    body: '{"budgetMs":1000}',
    timestampHeader: headers[TIMESTAMP_HEADER],
    signatureHeader: headers[SIGNATURE_HEADER],
    ...over,
  });
}

describe('signRequest / verifySignedRequest', () => {
  it('produces a unix-seconds timestamp and a v1=<64 hex> signature', async () => {
    const h = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '', timestamp: 1_700_000_000 });
    expect(h[TIMESTAMP_HEADER]).toBe('1700000000');
    expect(h[SIGNATURE_HEADER]).toMatch(/^v1=[0-9a-f]{64}$/);
  });

  it('signs HMAC-SHA256 over "v1\\n<ts>\\n<METHOD>\\n<path>\\n<body>" (reproducible with node:crypto)', async () => {
    const { createHmac } = await import('node:crypto');
    const h = await signRequest({ secret: SECRET, method: 'post', path: '/jobs?x=1', body: '{"a":1}', timestamp: 1_700_000_000 });
    const expected = createHmac('sha256', SECRET).update('v1\n1700000000\nPOST\n/jobs?x=1\n{"a":1}').digest('hex');
    expect(h[SIGNATURE_HEADER]).toBe(`v1=${expected}`);
  });

  it('accepts a valid signature made with the current secret', async () => {
    const h = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '{"budgetMs":1000}' });
    expect(await verify({ ...h })).toEqual({ ok: true, secretIndex: 0 });
  });

  it('accepts a signature made with the next secret during a rotation', async () => {
    const h = await signRequest({ secret: NEXT, method: 'POST', path: '/tick', body: '{"budgetMs":1000}' });
    expect(await verify({ ...h })).toEqual({ ok: true, secretIndex: 1 });
  });

  it("reports the index in the caller's list when an empty or missing secret comes first (an unset variable)", async () => {
    const h = await signRequest({ secret: NEXT, method: 'POST', path: '/tick', body: '{"budgetMs":1000}' });
    expect(await verify({ ...h }, { secrets: ['', NEXT] })).toEqual({ ok: true, secretIndex: 1 });
    expect(await verify({ ...h }, { secrets: [undefined as never, NEXT] })).toEqual({ ok: true, secretIndex: 1 });
  });

  it('refuses a signature made with a retired secret once it is no longer accepted', async () => {
    const h = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '{"budgetMs":1000}' });
    expect(await verify({ ...h }, { secrets: [NEXT] })).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('refuses a wrong secret, and any change to the body, path or method', async () => {
    const wrong = await signRequest({ secret: 'some-other-secret-xyz', method: 'POST', path: '/tick', body: '{"budgetMs":1000}' });
    expect(await verify({ ...wrong })).toEqual({ ok: false, reason: 'mismatch' });
    const h = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '{"budgetMs":1000}' });
    expect(await verify({ ...h }, { body: '{"budgetMs":1001}' })).toEqual({ ok: false, reason: 'mismatch' });
    expect(await verify({ ...h }, { path: '/jobs' })).toEqual({ ok: false, reason: 'mismatch' });
    expect(await verify({ ...h }, { method: 'PUT' })).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('refuses a timestamp more than 300 s old or ahead, and accepts one just inside', async () => {
    for (const [ts, ok] of [
      [now - 301, false],
      [now + 301, false],
      [now - 299, true],
      [now + 299, true],
    ] as const) {
      const h = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '{"budgetMs":1000}', timestamp: ts });
      // The verifier's clock is pinned: a test that starts a second after `now` must not shift the window.
      expect((await verify({ ...h }, { nowMs: now * 1000 })).ok, `timestamp offset ${ts - now}`).toBe(ok);
    }
  });

  it('refuses a request replayed after the window, though it was valid when first sent', async () => {
    const sentAt = Date.now();
    const h = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '{"budgetMs":1000}', timestamp: sentAt / 1000 });
    expect((await verify({ ...h }, { nowMs: sentAt + 1000 })).ok).toBe(true);
    expect(await verify({ ...h }, { nowMs: sentAt + 301_000 })).toEqual({ ok: false, reason: 'stale' });
  });

  it('reports missing and malformed headers without computing anything', async () => {
    const h = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '{"budgetMs":1000}' });
    expect(await verify({ [TIMESTAMP_HEADER]: h[TIMESTAMP_HEADER] })).toEqual({ ok: false, reason: 'unsigned' });
    expect(await verify({ [SIGNATURE_HEADER]: h[SIGNATURE_HEADER] })).toEqual({ ok: false, reason: 'unsigned' });
    for (const bad of ['v2=' + 'a'.repeat(64), 'v1=' + 'a'.repeat(63), 'v1=' + 'g'.repeat(64), 'sha256=abc', 'v1', '']) {
      const r = await verify({ ...h, [SIGNATURE_HEADER]: bad });
      expect(r.ok, bad).toBe(false);
    }
    expect(await verify({ ...h, [TIMESTAMP_HEADER]: '12.5' })).toEqual({ ok: false, reason: 'malformed' });
    expect(await verify({ ...h, [TIMESTAMP_HEADER]: '-1' })).toEqual({ ok: false, reason: 'malformed' });
  });

  it('refuses to verify with a tolerance or a clock that is not a finite number (it would accept any old request), and reads a header that is not a string as malformed', async () => {
    const h = await signRequest({ secret: SECRET, method: 'POST', path: '/jobs', body: '{}', timestamp: 1 });
    const input = { secrets: [SECRET], method: 'POST', path: '/jobs', body: '{}', timestampHeader: h[TIMESTAMP_HEADER], signatureHeader: h[SIGNATURE_HEADER] };
    await expect(verifySignedRequest({ ...input, toleranceSec: Number(undefined) })).rejects.toThrow(/toleranceSec must be a finite number/);
    await expect(verifySignedRequest({ ...input, nowMs: Number.NaN })).rejects.toThrow(/nowMs must be a finite number/);
    await expect(verifySignedRequest({ ...input, nowMs: 'x' as never })).rejects.toThrow(/nowMs must be a finite number/);
    await expect(verifySignedRequest({ ...input, secrets: null as never })).rejects.toThrow(/secrets must be an array/);
    // Dated 1970: stale with the default tolerance.
    expect(await verifySignedRequest(input)).toEqual({ ok: false, reason: 'stale' });
    expect(await verifySignedRequest({ ...input, timestampHeader: 42 as never })).toEqual({ ok: false, reason: 'malformed' });
    expect(await verifySignedRequest({ ...input, signatureHeader: ['x'] as never })).toEqual({ ok: false, reason: 'malformed' });
  });

  it('accepts a header carrying several v1 signatures when one of them matches', async () => {
    const h = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '{"budgetMs":1000}' });
    const header = `v1=${'0'.repeat(64)}, ${h[SIGNATURE_HEADER]}`;
    expect((await verify({ ...h, [SIGNATURE_HEADER]: header })).ok).toBe(true);
    // Entries that are not well-formed v1 values (another version, a short value) are passed over; one must be.
    for (const other of ['v1=00', `v2=${'a'.repeat(64)}`, 'v1']) {
      expect((await verify({ ...h, [SIGNATURE_HEADER]: `${other},${h[SIGNATURE_HEADER]}` })).ok, other).toBe(true);
    }
    expect(await verify({ ...h, [SIGNATURE_HEADER]: `v1=00,v2=${'a'.repeat(64)}` })).toEqual({ ok: false, reason: 'malformed' });
  });

  it('refuses everything when no secret is configured', async () => {
    const h = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '{"budgetMs":1000}' });
    expect(await verify({ ...h }, { secrets: [] })).toEqual({ ok: false, reason: 'no_secret' });
  });

  it('refuses a timestamp, body or method it cannot sign with a TypeError saying which', async () => {
    const base = { secret: SECRET, method: 'POST', path: '/tick' };
    await expect(signRequest({ ...base, timestamp: Number.NaN })).rejects.toThrow(/signRequest: timestamp must be unix seconds/);
    await expect(signRequest({ ...base, timestamp: -5 })).rejects.toThrow(/signRequest: timestamp/);
    await expect(signRequest({ ...base, body: { budgetMs: 1000 } as never })).rejects.toThrow(/signRequest: body must be the string, Uint8Array or ArrayBuffer you send/);
    await expect(signRequest({ ...base, method: undefined as never })).rejects.toThrow(/signRequest: method/);
    await expect(signRequest({ ...base, method: 'PO ST' })).rejects.toThrow(/signRequest: method/);
  });

  it('signs raw bytes: a Uint8Array body verifies against the same bytes', async () => {
    const bytes = new Uint8Array([0xff, 0x00, 0x7b]);
    const h = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: bytes });
    expect((await verify({ ...h }, { body: bytes })).ok).toBe(true);
  });

  it("takes the body as an ArrayBuffer (what request.arrayBuffer() gives), on both sides: it threw 'offset is out of bounds'", async () => {
    const bytes = new TextEncoder().encode('{"budgetMs":1000}');
    const h = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: bytes.buffer, timestamp: now });
    expect(await verify(h)).toEqual({ ok: true, secretIndex: 0 });
    expect(await verify(await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '{"budgetMs":1000}', timestamp: now }), { body: bytes.buffer })).toEqual({
      ok: true,
      secretIndex: 0,
    });
  });

  it('says what is wrong with a body or method of the wrong type, as signRequest does, instead of a bare RangeError or TypeError', async () => {
    const h = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '{"budgetMs":1000}', timestamp: now });
    for (const body of [42, { budgetMs: 1000 }]) {
      await expect(verify(h, { body: body as never })).rejects.toThrow(/^verifySignedRequest: body must be the request's raw body as a string, Uint8Array or ArrayBuffer/);
    }
    await expect(verify(h, { method: undefined as never })).rejects.toThrow(/^verifySignedRequest: method must be the request's HTTP method/);
    await expect(signRequest({ secret: SECRET, method: 'POST', path: 5 as never })).rejects.toThrow(/path must start with/);
  });

  it('imports nothing outside src/signing, so edge functions do not pull in pg', async () => {
    const dir = join(import.meta.dirname, '../../src/signing');
    for (const file of readdirSync(dir)) {
      const imports = [...readFileSync(join(dir, file), 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
      for (const spec of imports) expect(spec, `${file} imports ${spec}`).toMatch(/^\.\/[a-zA-Z]+\.js$/);
    }
    const out = await build({
      entryPoints: [join(dir, 'index.ts')],
      bundle: true,
      platform: 'neutral',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs.every((p) => p.includes('src/signing/'))).toBe(true);
    expect(out.outputFiles[0]!.text).not.toMatch(/from ['"](pg|node:)/);
  });
});
