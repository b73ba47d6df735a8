import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { isRecord } from '../../operator/api/json.js';
import { connect, type Kube, type KubeObject } from '../../operator/kube/client.js';

/**
 * An in-process Kubernetes API server for unit tests of the shell: objects in memory, lists with
 * field and label selectors, watches from a resourceVersion, create, replace (with the
 * resourceVersion precondition), merge patch and delete — and, on demand, the wire behaviour a
 * real server shows only on a bad day: truncated bodies, a 410 mid-stream, slow headers, a watch
 * that closes at once, a connection cut mid-line, any status.
 *
 * It serves HTTPS on 127.0.0.1 (a self-signed certificate made by `openssl`, which the kubeconfig
 * trusts) to a bearer token, and is reached through the project's own client (`kube/client.ts`),
 * so a test exercises the real requests, parsing and timers. It is never the
 * proof of a guarantee: what the API server really does is tested against the real one
 * (test/integration, test/e2e).
 */

export type Fault =
  /** Answer with a Kubernetes Status of this code. */
  | { kind: 'status'; code: number; reason?: string; message?: string }
  /** Send the headers and the first bytes of the real answer, then cut the connection. */
  | { kind: 'truncate'; bytes?: number }
  /** Wait this long before answering at all (then answer as usual). */
  | { kind: 'slowHeaders'; ms: number }
  /** Answer (as usual) only once `until` has settled. */
  | { kind: 'held'; until: Promise<unknown> }
  /** Accept the request and never answer. */
  | { kind: 'hang' }
  /** A watch: 200, then the stream ends at once, without an event. */
  | { kind: 'closeAtOnce' }
  /** A watch: 200, the events it is owed, then an ERROR event with code 410 and the end. */
  | { kind: 'gone' }
  /** A watch: 200, the events it is owed, then half an event line and a cut connection. */
  | { kind: 'cut' };

export interface FaultRule {
  method?: string;
  /** Matched against the path (without the query). */
  path?: RegExp;
  /** Only watches (true), only other requests (false), or both (undefined). */
  watch?: boolean;
  /** How many matching requests get the fault (default: every one until removed). */
  times?: number;
  fault: Fault;
}

export interface RequestRecord {
  method: string;
  path: string;
  query: Record<string, string>;
  /** When the request arrived (Date.now()). */
  at: number;
}

/** A request this server answers by a test's own function (e.g. SelfSubjectAccessReviews). */
interface Route {
  method: string;
  path: RegExp;
  answer: (body: unknown) => { code: number; body: unknown };
}

interface WatchStream {
  collection: string;
  filter: (o: KubeObject) => boolean;
  res: ServerResponse;
}

interface Event {
  rv: number;
  collection: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: KubeObject;
}

const TOKEN = 'fake-api-server-token';
const run = promisify(execFile);

/** The collection (path up to the resource) and the object's name and subresource, if any. */
function parsePath(path: string): { collection: string; name?: string; sub?: string } | undefined {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const prefix = parts[0] === 'api' ? 2 : parts[0] === 'apis' ? 3 : -1;
  if (prefix < 0 || parts.length <= prefix) return undefined;
  const rest = parts.slice(prefix);
  const scoped = rest[0] === 'namespaces' && rest.length >= 3 ? 3 : 1;
  const collection =
    '/' +
    parts
      .slice(0, prefix + scoped)
      .map(encodeURIComponent)
      .join('/');
  const [name, sub] = rest.slice(scoped);
  return { collection, ...(name !== undefined ? { name } : {}), ...(sub !== undefined ? { sub } : {}) };
}

function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return patch;
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

function selectorFilter(query: Record<string, string>): (o: KubeObject) => boolean {
  const tests: ((o: KubeObject) => boolean)[] = [];
  for (const term of (query.fieldSelector ?? '').split(',').filter(Boolean)) {
    const [k, v] = term.split('=');
    if (k === 'metadata.name') tests.push((o) => o.metadata.name === v);
    else if (k === 'metadata.namespace') tests.push((o) => o.metadata.namespace === v);
  }
  for (const term of (query.labelSelector ?? '').split(',').filter(Boolean)) {
    const [k, v] = term.split('=');
    tests.push((o) => (o.metadata.labels as Record<string, string> | undefined)?.[k!] === v);
  }
  return (o) => tests.every((t) => t(o));
}

export class FakeApiServer {
  readonly requests: RequestRecord[] = [];
  private readonly store = new Map<string, Map<string, KubeObject>>();
  private readonly events: Event[] = [];
  private readonly watches = new Set<WatchStream>();
  private readonly sockets = new Set<{ destroy(): void }>();
  private rules: FaultRule[] = [];
  private readonly routes: Route[] = [];
  private rv = 100;
  private generated = 0;
  private server!: Server;
  private dir = '';
  /** https://127.0.0.1:<port> */
  url = '';
  /** A kubeconfig file for this server (a token user). */
  kubeconfig = '';

  static async start(): Promise<FakeApiServer> {
    const s = new FakeApiServer();
    s.dir = await mkdtemp(join(tmpdir(), 'ctopo-fake-api-'));
    const [cert, key] = [join(s.dir, 'tls.crt'), join(s.dir, 'tls.key')];
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ]);
    const pem = await readFile(cert);
    s.server = createServer({ cert: pem, key: await readFile(key) }, (req, res) => void s.handle(req, res));
    s.server.on('connection', (sock) => {
      s.sockets.add(sock);
      sock.on('close', () => s.sockets.delete(sock));
    });
    await new Promise<void>((r) => s.server.listen(0, '127.0.0.1', r));
    s.url = `https://127.0.0.1:${(s.server.address() as AddressInfo).port}`;
    s.kubeconfig = join(s.dir, 'kubeconfig');
    await writeFile(
      s.kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          { name: 'fake', cluster: { server: s.url, 'certificate-authority-data': pem.toString('base64') } },
        ],
        users: [{ name: 'fake', user: { token: TOKEN } }],
        contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake', namespace: 'default' } }],
        'current-context': 'fake',
      }),
    );
    return s;
  }

  /** A client of this server (the project's own). */
  kube(requestTimeoutMs?: number): Kube {
    return connect({ kubeconfig: this.kubeconfig, ...(requestTimeoutMs ? { requestTimeoutMs } : {}) });
  }

  async close(): Promise<void> {
    for (const w of this.watches) w.res.destroy();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
    await rm(this.dir, { recursive: true, force: true });
  }

  /** Answers matching requests with a fault (the first matching rule applies). */
  fault(rule: FaultRule): void {
    this.rules.push({ ...rule });
  }

  clearFaults(): void {
    this.rules = [];
  }

  /** Answers `method` requests to a matching path with `answer` (before any stored object). */
  route(method: string, path: RegExp, answer: Route['answer']): void {
    this.routes.push({ method, path, answer });
  }

  /** Creates or replaces an object in `collection` (a path from kube/paths.ts); returns it as stored. */
  put(collection: string, object: KubeObject): KubeObject {
    const objects = this.objects(collection);
    const before = objects.get(object.metadata.name);
    const stored = this.stamp(collection, object, before);
    objects.set(stored.metadata.name, stored);
    this.emit(collection, before ? 'MODIFIED' : 'ADDED', stored);
    return stored;
  }

  remove(collection: string, name: string): void {
    const objects = this.objects(collection);
    const before = objects.get(name);
    if (!before) return;
    objects.delete(name);
    this.emit(collection, 'DELETED', {
      ...before,
      metadata: { ...before.metadata, resourceVersion: String(++this.rv) },
    });
  }

  get(collection: string, name: string): KubeObject | undefined {
    return this.objects(collection).get(name);
  }

  /** Every object of a collection, in the order they were created. */
  list(collection: string): KubeObject[] {
    return [...this.objects(collection).values()];
  }

  /** Sends a BOOKMARK at the current resourceVersion to every open watch. */
  bookmark(): void {
    for (const w of this.watches)
      w.res.write(
        JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(this.rv) } } }) +
          '\n',
      );
  }

  /** Ends every open watch cleanly (as the server's timeoutSeconds would). */
  endWatches(): void {
    for (const w of this.watches) w.res.end();
    this.watches.clear();
  }

  get openWatches(): number {
    return this.watches.size;
  }

  /** The requests to a collection or object path, watches (true) or the rest (false). */
  requestsTo(path: string, watch?: boolean): RequestRecord[] {
    return this.requests.filter(
      (r) => r.path === path && (watch === undefined || (r.query.watch === 'true') === watch),
    );
  }

  private objects(collection: string): Map<string, KubeObject> {
    let m = this.store.get(collection);
    if (!m) this.store.set(collection, (m = new Map()));
    return m;
  }

  private stamp(collection: string, object: KubeObject, before: KubeObject | undefined): KubeObject {
    const ns = /\/namespaces\/([^/]+)\//.exec(collection)?.[1];
    return {
      ...object,
      metadata: {
        ...object.metadata,
        ...(ns ? { namespace: decodeURIComponent(ns) } : {}),
        uid: before?.metadata.uid ?? object.metadata.uid ?? `uid-${this.rv + 1}`,
        resourceVersion: String(++this.rv),
      },
    };
  }

  private emit(collection: string, type: Event['type'], object: KubeObject): void {
    const event = { rv: this.rv, collection, type, object };
    this.events.push(event);
    for (const w of this.watches)
      if (w.collection === collection && w.filter(object) && !w.res.writableEnded)
        w.res.write(JSON.stringify({ type, object }) + '\n');
  }

  private status(res: ServerResponse, code: number, reason: string, message: string): void {
    if (res.headersSent) return void res.destroy();
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code }));
  }

  private takeFault(method: string, path: string, watch: boolean): Fault | undefined {
    const i = this.rules.findIndex(
      (r) =>
        (r.method === undefined || r.method === method) &&
        (r.path === undefined || r.path.test(path)) &&
        (r.watch === undefined || r.watch === watch),
    );
    if (i < 0) return undefined;
    const rule = this.rules[i]!;
    if (rule.times !== undefined && --rule.times <= 0) this.rules.splice(i, 1);
    return rule.fault;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const query = Object.fromEntries(url.searchParams);
    const method = req.method ?? 'GET';
    const watch = query.watch === 'true';
    this.requests.push({ method, path: url.pathname, query, at: Date.now() });
    let body = '';
    for await (const chunk of req) body += String(chunk);
    if (req.headers.authorization !== `Bearer ${TOKEN}`)
      return this.status(res, 401, 'Unauthorized', 'Unauthorized');
    const fault = this.takeFault(method, url.pathname, watch);
    if (fault?.kind === 'hang') return;
    if (fault?.kind === 'slowHeaders') await new Promise((r) => setTimeout(r, fault.ms));
    if (fault?.kind === 'held') await fault.until.catch(() => undefined);
    if (fault?.kind === 'status')
      return this.status(
        res,
        fault.code,
        fault.reason ?? `HTTP${fault.code}`,
        fault.message ?? `injected by the fake API server (${fault.code})`,
      );
    const route = this.routes.find((r) => r.method === method && r.path.test(url.pathname));
    if (route) {
      const answer = route.answer(body ? JSON.parse(body) : undefined);
      res.writeHead(answer.code, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify(answer.body));
    }
    const where = parsePath(url.pathname);
    if (!where) return this.status(res, 404, 'NotFound', 'the server could not find the requested resource');
    if (watch && method === 'GET' && where.name === undefined)
      return this.watch(where.collection, query, res, fault);
    const answer = this.answer(method, where, query, body);
    if (fault?.kind === 'truncate') {
      const text = JSON.stringify(answer.body);
      res.writeHead(answer.code, { 'content-type': 'application/json', 'content-length': text.length });
      res.write(text.slice(0, fault.bytes ?? Math.floor(text.length / 2)));
      return void setImmediate(() => res.destroy());
    }
    res.writeHead(answer.code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  }

  private answer(
    method: string,
    where: { collection: string; name?: string; sub?: string },
    query: Record<string, string>,
    text: string,
  ): { code: number; body: unknown } {
    const objects = this.objects(where.collection);
    const fail = (code: number, reason: string, message: string) => ({
      code,
      body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code },
    });
    const resource = where.collection.split('/').pop()!;
    const notFound = (name: string) => fail(404, 'NotFound', `${resource} "${name}" not found`);
    const input = text ? (JSON.parse(text) as KubeObject) : undefined;
    if (where.name === undefined) {
      if (method === 'GET') {
        const filter = selectorFilter(query);
        return {
          code: 200,
          body: {
            kind: 'List',
            apiVersion: 'v1',
            metadata: { resourceVersion: String(this.rv) },
            items: [...objects.values()].filter(filter),
          },
        };
      }
      if (method === 'POST' && input) {
        const generate = input.metadata.generateName as string | undefined;
        if (input.metadata.name === undefined && generate)
          input.metadata.name = `${generate}${(++this.generated).toString(36).padStart(5, '0')}`;
        if (objects.has(input.metadata.name))
          return fail(409, 'AlreadyExists', `${resource} "${input.metadata.name}" already exists`);
        return { code: 201, body: this.put(where.collection, input) };
      }
      return fail(405, 'MethodNotAllowed', `${method} on a collection`);
    }
    const current = objects.get(where.name);
    if (!current) return notFound(where.name);
    switch (method) {
      case 'GET':
        return { code: 200, body: current };
      case 'PUT': {
        if (!input) return fail(400, 'BadRequest', 'no body');
        const rv = input.metadata?.resourceVersion;
        if (rv !== undefined && rv !== current.metadata.resourceVersion)
          return fail(
            409,
            'Conflict',
            `Operation cannot be fulfilled on ${resource} "${where.name}": the object has been modified; please apply your changes to the latest version and try again`,
          );
        return {
          code: 200,
          body: this.put(where.collection, { ...input, metadata: { ...input.metadata, name: where.name } }),
        };
      }
      case 'PATCH': {
        const patched = applyMergePatch(current, input) as KubeObject;
        return { code: 200, body: this.put(where.collection, patched) };
      }
      case 'DELETE':
        this.remove(where.collection, where.name);
        return { code: 200, body: current };
      default:
        return fail(405, 'MethodNotAllowed', method);
    }
  }

  private watch(
    collection: string,
    query: Record<string, string>,
    res: ServerResponse,
    fault: Fault | undefined,
  ): void {
    const from = Number(query.resourceVersion ?? this.rv);
    const filter = selectorFilter(query);
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    if (fault?.kind === 'closeAtOnce') return void res.end();
    for (const e of this.events)
      if (e.collection === collection && e.rv > from && filter(e.object))
        res.write(JSON.stringify({ type: e.type, object: e.object }) + '\n');
    if (fault?.kind === 'gone') {
      res.write(
        JSON.stringify({
          type: 'ERROR',
          object: {
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            message: 'too old resource version',
            reason: 'Expired',
            code: 410,
          },
        }) + '\n',
      );
      return void res.end();
    }
    if (fault?.kind === 'cut') {
      res.write('{"type":"MODIFIED","object":{"metadata":');
      return void setImmediate(() => res.destroy());
    }
    const stream: WatchStream = { collection, filter, res };
    this.watches.add(stream);
    const timeout = Number(query.timeoutSeconds ?? 0);
    const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    timer?.unref();
    res.on('close', () => {
      clearTimeout(timer);
      this.watches.delete(stream);
    });
  }
}
