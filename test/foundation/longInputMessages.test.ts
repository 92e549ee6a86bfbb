// An error's message names the input it refuses, and an input can be
// megabytes long: a 2 MB job type made a 2 MB message, logged and sent back
// over HTTP whole. Messages are bounded; what they leave out they say.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { MAX_ERROR_MESSAGE_CHARS, UnknownJobTypeError, ValidationError, WorkhorseError } from '../../src/errors.js';
import { HandlerRegistry } from '../../src/worker/handlerRegistry.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const Ping = defineJob({ type: 'ping', schema: z.object({}) });

describe('error messages of long inputs', () => {
  it('an unknown job type of 2 MB is named by its start and end, and the message says how much was left out', async () => {
    const client = createClient({ connectionString: 'postgres://nobody@127.0.0.1:1/none', jobs: [Ping] });
    try {
      const type = `head-${'x'.repeat(2_000_000)}-tail`;
      const err = await client.enqueue(type, {}).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(UnknownJobTypeError);
      const { message } = err as UnknownJobTypeError;
      expect(message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
      expect(message).toMatch(/^unknown job type "head-x+ …\(\d+ characters left out\)… x+-tail": define it/);
      const left = Number(/\((\d+) characters left out\)/.exec(message)![1]);
      expect(message.length - `…( characters left out)… `.length - String(left).length - 1 + left).toBe(`unknown job type "${type}": define it with defineJob() and pass it to createClient({ jobs }) (in a worker process, createWorkhorseAdapter({ jobs }))`.length);
      expect((err as UnknownJobTypeError).type).toBe(type);
    } finally {
      await client.close();
    }
  });

  it('a second handler of a long type is refused with a bounded message', async () => {
    const client = createClient({ connectionString: 'postgres://nobody@127.0.0.1:1/none', jobs: [Ping] });
    const registry = new HandlerRegistry(client);
    const type = 'y'.repeat(100_000);
    registry.addHandler(type, async () => {});
    let err: unknown;
    try {
      registry.addHandler(type, async () => {});
    } catch (e) {
      err = e;
    }
    await client.close();
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
    expect((err as Error).message).toMatch(/is already registered$/);
  });

  it('a cut never splits a surrogate pair, and short messages are left as they are', () => {
    for (let pad = 0; pad < 4; pad++) {
      const err = new WorkhorseError('x', `${'a'.repeat(pad)}${'😀'.repeat(5000)}`);
      expect(err.message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
      expect(err.message).not.toMatch(LONE_SURROGATE);
    }
    expect(new WorkhorseError('x', 'short').message).toBe('short');
    const exact = 'z'.repeat(MAX_ERROR_MESSAGE_CHARS);
    expect(new WorkhorseError('x', exact).message).toBe(exact);
  });

  it('bounds the issues too: a 12,000-character unknown key named in an issue\'s message and path', () => {
    const key = 'q'.repeat(12_000);
    const err = new ValidationError('invalid query', [{ path: [key], message: `Unrecognized key: "${key}"` }, { path: ['limit'], message: 'short' }]);
    expect(err.issues[0]!.message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
    expect(err.issues[0]!.message).toMatch(/^Unrecognized key: "q+ …\(\d+ characters left out\)… q+"$/);
    expect(String(err.issues[0]!.path[0]).length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
    expect(err.issues[1]).toEqual({ path: ['limit'], message: 'short' });
  });
});
