import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface HealthSource {
  /** Empty when ready; otherwise what is not ready yet, for a person. */
  notReady(): string[];
}

/**
 * /healthz (the process answers), /readyz (200 only when `health` has nothing to say),
 * /metrics (Prometheus text). Nothing else.
 */
export function startHttpServer(
  host: string,
  port: number,
  registry: Registry,
  health: HealthSource,
): Promise<Server> {
  const server = createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405).end();
      return;
    }
    if (url === '/healthz' || url === '/livez') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (url === '/readyz') {
      const problems = health.notReady();
      res
        .writeHead(problems.length ? 503 : 200, { 'content-type': 'text/plain' })
        .end(problems.length ? problems.join('\n') + '\n' : 'ok\n');
    } else if (url === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (e: Error) => res.writeHead(500).end(e.message),
      );
    } else {
      res.writeHead(404).end();
    }
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => ok(server));
  });
}
