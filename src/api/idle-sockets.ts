import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The sockets of `server` that have not sent a request yet (a browser's preconnection, a pooled
 * client's spare). `server.close()` waits for them, since none is "idle" in Node's sense until a
 * request has been answered on it: {@link IdleSockets.destroy} ends them, so a shutdown does
 * not wait for a client's keep-alive timeout.
 */
export class IdleSockets {
  private readonly fresh = new Set<Socket>();

  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      this.fresh.add(socket);
      socket.once('close', () => this.fresh.delete(socket));
    });
    server.on('request', (request: { socket: Socket }) => this.fresh.delete(request.socket));
  }

  /** Destroys every socket that has not sent a request. */
  destroy(): void {
    for (const socket of this.fresh) socket.destroy();
    this.fresh.clear();
  }
}
