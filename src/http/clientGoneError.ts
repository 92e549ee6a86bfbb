// The client closed its connection before its request body arrived. Not a
// server failure: the error handler answers it (to nobody) without logging.
export class ClientGoneError extends Error {
  constructor(cause?: unknown) {
    super('the client closed the connection before its request body arrived', { cause });
    this.name = 'ClientGoneError';
  }
}
