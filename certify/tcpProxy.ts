// A TCP proxy in front of PostgreSQL that can misbehave on command, for the
// fault certification and the fault tests: freeze every connection (bytes
// stop flowing both ways, sockets stay open, new connections hang), resume
// them, throw the server's answers away (what a client sends still arrives),
// hold the server's answers back and then deliver them late,
// drop every connection at once with a TCP reset, or refuse new ones (a
// server that is down).
import { createServer, connect, type Server, type Socket } from 'node:net';

interface Pair {
  down: Socket;
  up: Socket;
}

export class TcpProxy {
  private server: Server | undefined;
  private readonly pairs = new Set<Pair>();
  private readonly stranded = new Set<Pair>();
  private frozen = false;
  private droppingAnswers = false;
  private holdingAnswers = false;
  /** holdAnswers(true) once a client sends bytes holding this text. */
  private holdMarker: string | undefined;
  private refusing = false;
  /** Connections accepted so far. */
  accepted = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Listens on a free port of 127.0.0.1; returns it. */
  async start(): Promise<number> {
    this.server = createServer((down) => this.accept(down));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as { port: number }).port;
  }

  private accept(down: Socket): void {
    this.accepted++;
    if (this.refusing) {
      down.resetAndDestroy();
      return;
    }
    const up = connect(this.targetPort, this.targetHost);
    const pair = { down, up };
    this.pairs.add(pair);
    const end = () => {
      this.pairs.delete(pair);
      down.destroy();
      up.destroy();
    };
    down.on('error', end).on('close', end);
    up.on('error', end).on('close', end);
    down.on('data', (d: Buffer) => {
      up.write(d);
      if (this.holdMarker !== undefined && d.includes(this.holdMarker)) {
        this.holdMarker = undefined;
        this.holdAnswers(true);
      }
    });
    up.on('data', (d) => {
      if (!this.droppingAnswers) down.write(d);
    });
    if (this.frozen) {
      down.pause();
      up.pause();
    } else if (this.holdingAnswers) up.pause();
  }

  /** Stops every byte, both ways, on every connection, old and new. */
  freeze(): void {
    this.frozen = true;
    for (const p of this.pairs) {
      p.down.pause();
      p.up.pause();
    }
  }

  /** While on, every byte the server sends is thrown away: statements run and commit, and their clients never hear. */
  dropAnswers(on: boolean): void {
    this.droppingAnswers = on;
  }

  /**
   * While on, the server's answers wait in the proxy (what a client sends
   * still arrives: statements run and commit); off, they are delivered,
   * late. A network that stalled one way and recovered.
   */
  holdAnswers(on: boolean): void {
    this.holdingAnswers = on;
    for (const p of this.pairs) {
      if (on) p.up.pause();
      else if (!this.frozen) p.up.resume();
    }
  }

  /** Holds every answer (holdAnswers(true)) from the moment a client sends `text` (a statement), that statement's answer included. */
  holdAnswersOnceSent(text: string): void {
    this.holdMarker = text;
  }

  /** While on, every new connection is reset at once (a stopped server); call dropAll() for the open ones. */
  refuse(on: boolean): void {
    this.refusing = on;
  }

  resume(): void {
    this.frozen = false;
    for (const p of this.pairs) {
      p.down.resume();
      p.up.resume();
    }
  }

  /**
   * Stops every byte on the connections open now, for good, while new
   * connections flow: a peer that vanished without a reset (a failed host)
   * behind a name that now leads to a live one. The stranded sockets stay
   * open until close().
   */
  strandOpen(): number {
    const n = this.pairs.size;
    for (const p of this.pairs) {
      p.down.pause();
      p.up.pause();
      this.stranded.add(p);
    }
    this.pairs.clear();
    return n;
  }

  /** Resets every connection (both sides see the connection die). Returns how many. */
  dropAll(): number {
    const n = this.pairs.size;
    for (const p of [...this.pairs]) {
      p.down.resetAndDestroy();
      p.up.resetAndDestroy();
      this.pairs.delete(p);
    }
    return n;
  }

  get connections(): number {
    return this.pairs.size;
  }

  async close(): Promise<void> {
    this.dropAll();
    for (const p of this.stranded) {
      p.down.destroy();
      p.up.destroy();
    }
    this.stranded.clear();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
