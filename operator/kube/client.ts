import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { KubeConfig as KubeConfigType, Watch as WatchType } from '@kubernetes/client-node';
import { ListSplitter } from './list-splitter.js';

/**
 * The one module that imports @kubernetes/client-node. It takes from it what it does well —
 * reading kubeconfigs and in-cluster credentials (KubeConfig) and the streaming Watch — and
 * exposes a small raw-JSON REST surface. Objects stay the API server's JSON (no model
 * classes): the naming engine evaluates users' JSONPath against exactly what the API sent.
 *
 * Every failure is one of two kinds, the two rows of the seed's error table besides 200:
 * `ApiError` (the server answered with a status ≥ 400) and `TransportError` (no answer).
 */

// The CLI launcher narrows what this import loads (slim-client-node.ts); a library user gets it whole.
const { KubeConfig } = (await import('@kubernetes/client-node/dist/config.js')) as {
  KubeConfig: typeof KubeConfigType;
};
const { Watch } = (await import('@kubernetes/client-node/dist/watch.js')) as { Watch: typeof WatchType };
type KubeConfig = KubeConfigType;
type Watch = WatchType;

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

export type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    [k: string]: unknown;
  };
  [k: string]: unknown;
};

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
  private readonly watcher: Watch;
  /** One keep-alive agent per set of TLS credentials: client-node makes a new one per request. */
  private readonly agents = new Map<string, HttpsAgent>();

  constructor(
    private readonly kc: KubeConfig,
    private readonly observe: RequestObserver | undefined,
    private readonly requestTimeoutMs: number,
  ) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    this.server = cluster.server.replace(/\/+$/, '');
    const ctx = kc.getContextObject(kc.getCurrentContext());
    this.namespace = ctx?.namespace ?? 'default';
    this.watcher = new Watch(kc);
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
    const https: RequestOptions = { method, headers: { Accept: 'application/json' } };
    await this.kc.applyToHTTPSOptions(https);
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

  private agentFor(o: RequestOptions): HttpsAgent {
    const h = createHash('sha256');
    for (const part of [o.ca, o.cert, o.key, o.pfx, String(o.rejectUnauthorized), o.servername])
      h.update(part === undefined ? '-' : Array.isArray(part) ? part.join('\n') : String(part)).update('\0');
    const key = h.digest('hex');
    let agent = this.agents.get(key);
    if (!agent) {
      agent = new HttpsAgent({
        keepAlive: true,
        maxSockets: 16,
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

  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: WatchEventType, object: KubeObject) => void,
    onDone: (err: unknown) => void,
    idleTimeoutMs: number,
  ): Promise<WatchHandle> {
    // client-node's Watch aborts a stream after requestTimeoutMs without data (30 s). Watches
    // here ask for bookmarks, which come about once a minute, so the reflector's own idle
    // timer (longer than the bookmark period) is the one that decides.
    (this.watcher as unknown as { requestTimeoutMs: number }).requestTimeoutMs = idleTimeoutMs;
    let done = false;
    const controller = await this.watcher.watch(
      path,
      query,
      (type, obj) => onEvent(type as WatchEventType, obj as KubeObject),
      (err: unknown) => {
        if (done) return;
        done = true;
        const code = (err as { statusCode?: number } | null)?.statusCode;
        if (code) onDone(new ApiError(code, reasonFor(code), `watch ${path}: ${(err as Error).message}`));
        else if (err)
          onDone(
            new TransportError(`watch ${path}: ${(err as Error).message ?? String(err)}`, { cause: err }),
          );
        else onDone(null);
      },
    );
    return {
      abort: () => {
        done = true;
        controller.abort();
      },
    };
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
  const kc = new KubeConfig();
  if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
  else kc.loadFromDefault();
  return new KubeClient(kc, opts.observe, opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
}
