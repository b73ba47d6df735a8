import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { createHash } from 'node:crypto';
import * as nodeModule from 'node:module';
import type { KubeConfig as KubeConfigType } from '@kubernetes/client-node';
import { findCredentials, type Credentials, type CredentialSource } from './credentials.js';
import { ListSplitter } from './list-splitter.js';
import type { KubeObject } from './object.js';

export type { KubeObject };

// Not `import … from 'node:http'`: an ES module import of node:http reads every export, and its
// lazy WebSocket getters then load the bundled undici and http2 (~5 MB resident in the agent).
const { request: httpRequest } = process.getBuiltinModule('node:http');

/**
 * The one module that talks HTTP to Kubernetes, and the one that imports
 * @kubernetes/client-node — only when it must: credentials come from `credentials.ts` (the
 * in-cluster service account, kubeconfigs with a token, token file, client certificate or basic
 * auth) and client-node's KubeConfig is loaded only for kubeconfigs that need more (exec
 * plugins, auth providers, …). Requests and watches are plain node:https; objects stay the API
 * server's JSON (no model classes): the naming engine evaluates users' JSONPath against exactly
 * what the API sent. An agent reading one object thus never loads the 25 MB client.
 *
 * Every failure is one of two kinds, the two rows of the error table besides 200:
 * `ApiError` (the server answered with a status ≥ 400) and `TransportError` (no answer).
 */

/**
 * client-node's KubeConfig, loaded (synchronously: require of ES modules) on first need only.
 * The CLI launcher narrows what it loads (slim-client-node.ts); a library user gets it whole.
 */
function loadKubeConfig(): typeof KubeConfigType {
  const require = nodeModule.createRequire(import.meta.url);
  return (require('@kubernetes/client-node/dist/config.js') as { KubeConfig: typeof KubeConfigType })
    .KubeConfig;
}

/** Credentials from client-node, for a kubeconfig the lean path cannot serve. */
function clientNodeCredentials(source: Extract<CredentialSource, { kind: 'delegate' }>): Credentials {
  const KubeConfig = loadKubeConfig();
  const kc = new KubeConfig();
  if (source.kubeconfig) kc.loadFromFile(source.kubeconfig);
  else kc.loadFromDefault();
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  return {
    server: cluster.server.replace(/\/+$/, ''),
    namespace: kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default',
    apply: (opts) => kc.applyToHTTPSOptions(opts),
  };
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export class TransportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransportError';
  }
}

export interface ObjectList<T = KubeObject> {
  items: T[];
  metadata: { resourceVersion: string; continue?: string };
}

export interface WatchHandle {
  abort(): void;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface RequestOptionsExtra {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  timeoutMs?: number;
  /**
   * The caller has no use for a successful answer's body: it is not parsed (a status write's
   * answer is the whole object again — over a megabyte at 5,000 peers). Errors are still read.
   */
  ignoreBody?: boolean;
  /** The Accept header (default application/json), e.g. to ask for the metadata alone. */
  accept?: string;
}

/** Counts what this process asked of the API server, by verb-ish kind (for metrics). */
export type RequestObserver = (info: {
  method: string;
  path: string;
  code: number | 'TransportError';
  bytes: number;
  ms: number;
}) => void;

export interface Kube {
  readonly server: string;
  /** The namespace of the current context (in a pod: its own namespace). */
  readonly namespace: string;
  request<T = unknown>(method: string, path: string, opts?: RequestOptionsExtra): Promise<T>;
  /**
   * A GET of a list (one page), each item passed through `keep` as soon as it has arrived:
   * the raw items of a page are never all held at once.
   */
  list<T>(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    keep: (o: KubeObject) => T,
  ): Promise<ObjectList<T>>;
  watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: WatchEventType, object: KubeObject) => void,
    onDone: (err: unknown) => void,
    idleTimeoutMs: number,
  ): Promise<WatchHandle>;
  /**
   * Ends every request and watch still open (they fail with a TransportError) and closes the
   * kept-alive connections: a process that stops is not held by a request the API server never
   * answers. The client stays usable; a later request opens a new connection.
   */
  close(): void;
}

/** How long a request may go without an answer before it is a TransportError (a setting; this is its default). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

function reasonFor(code: number): string {
  const known: Record<number, string> = {
    400: 'BadRequest',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'NotFound',
    405: 'MethodNotAllowed',
    409: 'Conflict',
    410: 'Gone',
    422: 'Invalid',
    429: 'TooManyRequests',
    500: 'InternalError',
    503: 'ServiceUnavailable',
    504: 'Timeout',
  };
  return known[code] ?? `HTTP${code}`;
}

class KubeClient implements Kube {
  readonly server: string;
  readonly namespace: string;
  /** One keep-alive agent per set of TLS credentials (a rotated client certificate gets its own). */
  private readonly agents = new Map<string, HttpsAgent>();

  constructor(
    private readonly creds: Credentials,
    private readonly observe: RequestObserver | undefined,
    private readonly requestTimeoutMs: number,
  ) {
    this.server = creds.server;
    this.namespace = creds.namespace;
  }

  request<T>(method: string, path: string, opts: RequestOptionsExtra = {}): Promise<T> {
    let text = '';
    let failed = false;
    return this.exchange(method, path, opts, {
      start: (ok) => (failed = !ok),
      push: (chunk) => {
        if (failed || !opts.ignoreBody) text += chunk;
      },
      end: () => (text.length ? JSON.parse(text) : undefined),
      head: () => text.slice(0, 500),
    }) as Promise<T>;
  }

  async list<T>(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    keep: (o: KubeObject) => T,
  ): Promise<ObjectList<T>> {
    const items: T[] = [];
    let head = '';
    const splitter = new ListSplitter((o) => items.push(keep(o as KubeObject)));
    const rest = (await this.exchange(
      'GET',
      path,
      { query },
      {
        push: (chunk) => {
          if (head.length < 500) head += chunk.slice(0, 500 - head.length);
          splitter.push(chunk);
        },
        end: () => splitter.end(),
        head: () => head,
      },
    )) as Omit<ObjectList<T>, 'items'> | undefined;
    if (!rest?.metadata) throw new TransportError(`GET ${path}: the answer is not a list`);
    return { ...rest, items };
  }

  /**
   * One request. The body goes to `sink` as text as it arrives: bodies stay strings in V8's
   * heap rather than Buffers churned through malloc, which kept the process's resident memory
   * far above what it held. A 2xx body the sink cannot read is a TransportError.
   */
  private async exchange(
    method: string,
    path: string,
    opts: RequestOptionsExtra,
    sink: { start?(ok: boolean): void; push(chunk: string): void; end(): unknown; head(): string },
  ): Promise<unknown> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const https: RequestOptions = { method, headers: { Accept: opts.accept ?? 'application/json' } };
    await this.creds.apply(https);
    https.agent = this.agentFor(https);
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const headers = (https.headers ?? {}) as Record<string, string | number>;
    if (payload !== undefined) {
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = Buffer.byteLength(payload);
    }
    https.headers = headers;
    const started = Date.now();
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    return new Promise<unknown>((resolve, reject) => {
      let settled = false;
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        this.observe?.({ method, path, code: 'TransportError', bytes: 0, ms: Date.now() - started });
        reject(e);
      };
      const timeoutMs = opts.timeoutMs ?? this.requestTimeoutMs;
      const req = send(url, { ...https, timeout: timeoutMs }, (res) => {
        const code = res.statusCode ?? 0;
        const ok = code >= 200 && code < 300;
        let bytes = 0;
        let unreadable: Error | undefined;
        sink.start?.(ok);
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          bytes += Buffer.byteLength(chunk);
          if (unreadable) return;
          try {
            sink.push(chunk);
          } catch (e) {
            unreadable = e as Error;
          }
        });
        res.on('error', (e) => fail(new TransportError(`${method} ${path}: ${e.message}`, { cause: e })));
        res.on('end', () => {
          if (settled) return;
          let body: unknown;
          try {
            if (!unreadable) body = sink.end();
          } catch (e) {
            unreadable = e as Error;
          }
          if (ok && unreadable)
            return fail(
              new TransportError(`${method} ${path}: unreadable answer: ${unreadable.message}`, {
                cause: unreadable,
              }),
            );
          settled = true;
          this.observe?.({ method, path, code, bytes, ms: Date.now() - started });
          if (ok) return resolve(body);
          const status = body as { reason?: string; message?: string } | undefined;
          const message = status?.message ?? (sink.head() || reasonFor(code));
          reject(new ApiError(code, status?.reason || reasonFor(code), message));
        });
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000}s`)));
      req.on('error', (e) =>
        fail(new TransportError(`${method} ${url.host}${path}: ${e.message}`, { cause: e })),
      );
      req.end(payload, 'utf8');
    });
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  /** Watches get their own sockets: a long watch must never hold a request's place in the pool. */
  private agentFor(o: RequestOptions, watch = false): HttpsAgent {
    const h = createHash('sha256').update(watch ? 'watch\0' : 'request\0');
    for (const part of [o.ca, o.cert, o.key, o.pfx, String(o.rejectUnauthorized), o.servername])
      h.update(part === undefined ? '-' : Array.isArray(part) ? part.join('\n') : String(part)).update('\0');
    const key = h.digest('hex');
    let agent = this.agents.get(key);
    if (!agent) {
      agent = new HttpsAgent({
        keepAlive: !watch,
        maxSockets: watch ? Infinity : 16,
        ca: o.ca,
        cert: o.cert,
        key: o.key,
        pfx: o.pfx,
        passphrase: o.passphrase,
        ...(o.rejectUnauthorized !== undefined ? { rejectUnauthorized: o.rejectUnauthorized } : {}),
        ...(o.servername ? { servername: o.servername } : {}),
      });
      this.agents.set(key, agent);
    }
    return agent;
  }

  /**
   * A watch: resolves once the server accepted it (200), then hands over each event line by
   * line; `onDone` hears how it ended — null when the server closed it, an ApiError for a
   * refusal, a TransportError for a broken or silent (idleTimeoutMs without a byte) stream.
   */
  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: WatchEventType, object: KubeObject) => void,
    onDone: (err: unknown) => void,
    idleTimeoutMs: number,
  ): Promise<WatchHandle> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries({ ...query, watch: true }))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const https: RequestOptions = { method: 'GET', headers: { Accept: 'application/json' } };
    await this.creds.apply(https);
    https.agent = this.agentFor(https, true);
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    let done = false;
    const finish = (err: unknown) => {
      if (done) return;
      done = true;
      onDone(err);
    };
    return new Promise<WatchHandle>((resolveHandle) => {
      const req = send(url, { ...https, timeout: idleTimeoutMs }, (res) => {
        const code = res.statusCode ?? 0;
        res.setEncoding('utf8');
        if (code !== 200) {
          let body = '';
          res.on('data', (c: string) => body.length < 4096 && (body += c));
          res.on('end', () => {
            let status: { reason?: string; message?: string } | undefined;
            try {
              status = JSON.parse(body) as typeof status;
            } catch {
              status = undefined;
            }
            finish(
              new ApiError(
                code,
                status?.reason || reasonFor(code),
                `watch ${path}: ${status?.message ?? (body.slice(0, 500) || reasonFor(code))}`,
              ),
            );
          });
          res.on('error', () =>
            finish(new ApiError(code, reasonFor(code), `watch ${path}: ${reasonFor(code)}`)),
          );
          resolveHandle(handle);
          return;
        }
        // An event's text so far, in the chunks it came in: only each new chunk is searched for the
        // line's end (searching all of it again, as one growing string, for every chunk made reading
        // an event of a 1 MB object quadratic).
        let parts: string[] = [];
        res.on('data', (chunk: string) => {
          let start = 0;
          let nl: number;
          while (!done && (nl = chunk.indexOf('\n', start)) >= 0) {
            parts.push(chunk.slice(start, nl));
            const line = parts.join('').trim();
            parts = [];
            start = nl + 1;
            if (!line) continue;
            let event: { type: WatchEventType; object: KubeObject };
            try {
              event = JSON.parse(line) as typeof event;
            } catch (e) {
              req.destroy();
              finish(new TransportError(`watch ${path}: unreadable event: ${(e as Error).message}`));
              return;
            }
            onEvent(event.type, event.object);
          }
          if (!done && start < chunk.length) parts.push(chunk.slice(start));
        });
        res.on('end', () => finish(null));
        res.on('error', (e) => finish(new TransportError(`watch ${path}: ${e.message}`, { cause: e })));
        res.on('close', () =>
          finish(res.complete ? null : new TransportError(`watch ${path}: the stream broke`)),
        );
        resolveHandle(handle);
      });
      const handle: WatchHandle = {
        abort: () => {
          done = true;
          req.destroy();
        },
      };
      req.on('timeout', () =>
        req.destroy(new Error(`the watch was silent for ${Math.round(idleTimeoutMs / 1000)} s`)),
      );
      req.on('error', (e) => {
        finish(new TransportError(`watch ${url.host}${path}: ${e.message}`, { cause: e }));
        resolveHandle(handle);
      });
      req.end();
    });
  }
}

export interface ConnectOptions {
  /** A kubeconfig file; default: $KUBECONFIG, ~/.kube/config, or the in-cluster service account. */
  kubeconfig?: string;
  observe?: RequestObserver;
  /** Default: DEFAULT_REQUEST_TIMEOUT_MS. */
  requestTimeoutMs?: number;
}

export function connect(opts: ConnectOptions = {}): Kube {
  const source = findCredentials(opts.kubeconfig);
  const creds = source.kind === 'lean' ? source.credentials : clientNodeCredentials(source);
  return new KubeClient(creds, opts.observe, opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
}
