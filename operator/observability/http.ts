import type { Server } from 'node:http';

/** What /metrics serves: prom-client's Registry or observability/metrics.ts's. */
export interface MetricsSource {
  metrics(): Promise<string>;
  readonly contentType: string;
}

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
  registry: MetricsSource,
  health: HealthSource,
): Promise<Server> {
  // Not `import … from 'node:http'`: an ES module import of node:http reads every export, and its
  // lazy WebSocket getters then load the bundled undici and http2 (~5 MB resident).
  const { createServer } = process.getBuiltinModule('node:http');
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
