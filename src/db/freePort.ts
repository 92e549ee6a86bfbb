// A TCP port on loopback that nothing listens on at this moment: the
// embedded server's default port, and the port of every server the tests,
// the certification and the benchmark start for themselves. The kernel
// chooses it (a listen on port 0); the listener closes before the port is
// returned, so another process can in principle take it first.
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolvePort(addr.port) : reject(new Error('the kernel gave no port'))));
    });
  });
}
