// Graceful stop: no new connections; connections with no request in flight
// (idle keep-alive ones, and ones still sending headers) are closed at once
// and as soon as their answer is sent; after `drainMs` whatever is left is
// closed. Answers sent while draining carry Connection: close.
import type { Server } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

export class ConnectionDrain {
  /** Sockets with a request whose answer is not finished. */
  private readonly busy = new Map<Socket, number>();
  private readonly sockets = new Set<Socket>();
  private draining = false;

  constructor(private readonly server: Server) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => {
        this.sockets.delete(socket);
        this.busy.delete(socket);
      });
    });
    server.on('request', (req, res) => {
      const socket = req.socket;
      this.busy.set(socket, (this.busy.get(socket) ?? 0) + 1);
      if (this.draining) res.setHeader('Connection', 'close');
      res.once('close', () => {
        const left = (this.busy.get(socket) ?? 1) - 1;
        if (left > 0) this.busy.set(socket, left);
        else this.busy.delete(socket);
        if (this.draining) this.closeIdle();
      });
    });
  }

  /** Stop accepting and drain; resolves 'drained' when every connection closed, 'cut' when drainMs ran out first. */
  drain(drainMs: number): Promise<'drained' | 'cut'> {
    this.draining = true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        for (const socket of this.sockets) socket.destroy();
        resolve('cut');
      }, drainMs);
      timer.unref();
      // net's close, not http's: http's also destroys every connection whose
      // request was read, even while its answer is still being sent.
      NetServer.prototype.close.call(this.server, () => {
        clearTimeout(timer);
        resolve('drained');
      });
      this.closeIdle();
    });
  }

  private closeIdle(): void {
    for (const socket of this.sockets) if (!this.busy.has(socket)) socket.destroySoon();
  }
}
