// A Worker (or the HTTP app) given something other than this copy's Client
// says what is wrong: a Client of another copy of workhorse (an application
// importing dist/ beside code running the sources, two installed versions)
// is named as such, rather than told it did not come from createClient().
import { describe, expect, it } from 'vitest';
import { ConfigError, createApp, Worker } from '../../src/index.js';

/** What a Client of another copy looks like from here: its own class, named Client. */
class Client {
  enqueue(): void {}
}

function refusal(f: () => unknown): ConfigError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('not refused');
}

describe('a Worker given no Client of this copy', () => {
  it('names a Client of another copy of workhorse as such', () => {
    const err = refusal(() => new Worker(new Client() as never));
    expect(err.message).toMatch(/another copy of workhorse/);
    expect(err.issues[0]!.path).toEqual(['client']);
  });

  it('asks for the client createClient() returns otherwise', () => {
    expect(refusal(() => new Worker({} as never)).message).toMatch(/expected the client createClient\(\) returns/);
    expect(refusal(() => new Worker(undefined as never)).message).toMatch(/expected the client createClient\(\) returns/);
  });

  it('the HTTP app says the same', () => {
    expect(refusal(() => createApp({ client: new Client() } as never)).message).toMatch(/another copy of workhorse/);
  });
});
