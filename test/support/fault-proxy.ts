import { createServer, request, type Server } from 'node:https';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';

/**
 * A TLS-terminating reverse proxy in front of the real API server that can answer with any
 * HTTP status, drop connections (including open watches) or hang, on demand. Clients reach the
 * API server through it with a bearer token (a client certificate cannot pass a proxy).
 *
 *   pass       forward everything (default)
 *   status:N   answer every request with a Kubernetes Status of code N
 *   drop       destroy every connection, the open ones too
 *   hang       accept requests and never answer
 *
 * `only` limits a fault to requests whose path matches (e.g. pod lists), the rest pass.
 */
export type FaultMode =
  { kind: 'pass' } | { kind: 'status'; code: number } | { kind: 'drop' } | { kind: 'hang' };

export class FaultProxy {
  mode: FaultMode = { kind: 'pass' };
  only: RegExp | undefined;
  requests = 0;
  /** Requests a fault answered (a status, a hang or a drop): how a test sees that a fault hit. */
  faulted = 0;
  /** Every request, as `METHOD url`, in order (what a test counts the client's requests by). */
  readonly seen: string[] = [];
  /** Answers passed on from the API server, by HTTP status. */
  readonly passed = new Map<number, number>();
  private readonly sockets = new Set<Socket>();
  private server!: Server;
  url = '';

  constructor(private readonly s: ControlPlaneState) {}

  async start(): Promise<this> {
    const upstream = new URL(this.s.server);
    const ca = readFileSync(this.s.pki.caCert);
    this.server = createServer(
      { cert: readFileSync(this.s.pki.serverCert), key: readFileSync(this.s.pki.serverKey) },
      (req, res) => {
        this.requests++;
        this.seen.push(`${req.method} ${req.url}`);
        const mode =
          this.only && !this.only.test(req.url ?? '') ? ({ kind: 'pass' } as FaultMode) : this.mode;
        if (mode.kind !== 'pass') this.faulted++;
        if (mode.kind === 'drop') return void req.socket.destroy();
        if (mode.kind === 'hang') return;
        if (mode.kind === 'status') {
          const reason =
            mode.code === 503
              ? 'ServiceUnavailable'
              : mode.code === 500
                ? 'InternalError'
                : mode.code === 429
                  ? 'TooManyRequests'
                  : 'Injected';
          res.writeHead(mode.code, { 'content-type': 'application/json' });
          return void res.end(
            JSON.stringify({
              kind: 'Status',
              apiVersion: 'v1',
              status: 'Failure',
              message: `injected by the fault proxy (${mode.code})`,
              reason,
              code: mode.code,
            }),
          );
        }
        const up = request(
          {
            host: upstream.hostname,
            port: upstream.port,
            path: req.url,
            method: req.method,
            headers: req.headers,
            ca,
          },
          (ur) => {
            this.passed.set(ur.statusCode ?? 502, (this.passed.get(ur.statusCode ?? 502) ?? 0) + 1);
            res.writeHead(ur.statusCode ?? 502, ur.headers);
            // At once, as the API server does: a watch's headers must not wait for its first event
            // (clients take the headers as the watch's acceptance).
            res.flushHeaders();
            ur.pipe(res);
          },
        );
        up.on('error', () => req.socket.destroy());
        res.on('close', () => up.destroy());
        req.pipe(up);
      },
    );
    this.server.on('secureConnection', (sock: Socket) => {
      this.sockets.add(sock);
      sock.on('close', () => this.sockets.delete(sock));
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Sets the fault; `drop` also destroys the open connections and returns how many there were. */
  set(mode: FaultMode, only?: RegExp): number {
    this.mode = mode;
    this.only = only;
    if (mode.kind !== 'drop') return 0;
    const open = [...this.sockets];
    for (const s of open) s.destroy();
    return open.length;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
