import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { RequestOptions } from 'node:https';
import { createRequire } from 'node:module';

/**
 * A kubeconfig's text: JSON (kubectl writes it with `-o json`) without a parser module, anything
 * else with `yaml`, loaded only then: in a pod the service account needs neither.
 */
function parseKubeconfig(text: string): unknown {
  if (/^\s*\{/.test(text))
    try {
      return JSON.parse(text);
    } catch {
      // not JSON after all: YAML's flow style also starts with "{"
    }
  return (createRequire(import.meta.url)('yaml') as { parse(t: string): unknown }).parse(text);
}

/**
 * Where the API server is and how to authenticate to it, without @kubernetes/client-node: the
 * in-cluster service account (its projected token re-read when the file changes) and kubeconfig
 * files whose user has a token, a token file, a client certificate or a user name and password.
 * Anything else — exec plugins, auth providers, impersonation, proxies, several files in
 * $KUBECONFIG — is `{ kind: 'delegate' }`: `client.ts` then loads client-node for that kubeconfig.
 * A process that reads one object (the agent) so never loads the 25 MB client.
 */

export interface Credentials {
  readonly server: string;
  readonly namespace: string;
  /** Sets TLS material and the Authorization header on a request's options. */
  apply(opts: RequestOptions): void | Promise<void>;
}

export type CredentialSource =
  | { kind: 'lean'; credentials: Credentials }
  /** Hand this kubeconfig (undefined: the default lookup) to client-node, for `reason`. */
  | { kind: 'delegate'; kubeconfig?: string; server?: string; namespace?: string; reason: string };

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A file re-read when its modification time or size changes, looked at at most once a second. */
export class WatchedFile {
  private text = '';
  private stamp = '';
  private checkedAt = -Infinity;

  constructor(
    readonly path: string,
    private readonly now: () => number = Date.now,
  ) {}

  read(): string {
    const t = this.now();
    if (t - this.checkedAt >= 1000) {
      this.checkedAt = t;
      const st = statSync(this.path);
      const stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
      if (stamp !== this.stamp) {
        this.text = readFileSync(this.path, 'utf8').trim();
        this.stamp = stamp;
      }
    }
    return this.text;
  }
}

function bearer(opts: RequestOptions, token: string): void {
  opts.headers = { ...(opts.headers as Record<string, string>), Authorization: `Bearer ${token}` };
}

/** The in-cluster service account, as the kubelet mounts it. */
export function inClusterCredentials(env = process.env, dir = SERVICE_ACCOUNT_DIR): Credentials {
  const host = env.KUBERNETES_SERVICE_HOST!;
  const port = env.KUBERNETES_SERVICE_PORT ?? '443';
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const token = new WatchedFile(join(dir, 'token'));
  const ca = readFileSync(join(dir, 'ca.crt'));
  const nsFile = join(dir, 'namespace');
  const namespace = existsSync(nsFile) ? readFileSync(nsFile, 'utf8').trim() : 'default';
  return {
    server,
    namespace,
    apply(opts) {
      opts.ca = ca;
      bearer(opts, token.read());
    },
  };
}

type Named<T> = { name?: string } & T;
interface KubeconfigFile {
  'current-context'?: string;
  contexts?: Named<{ context?: { cluster?: string; user?: string; namespace?: string } }>[];
  clusters?: Named<{ cluster?: Record<string, unknown> }>[];
  users?: Named<{ user?: Record<string, unknown> }>[];
}

const CLUSTER_KEYS = new Set([
  'server',
  'certificate-authority',
  'certificate-authority-data',
  'insecure-skip-tls-verify',
  'tls-server-name',
  'extensions',
]);
const USER_KEYS = new Set([
  'token',
  'tokenFile',
  'client-certificate',
  'client-certificate-data',
  'client-key',
  'client-key-data',
  'username',
  'password',
  'extensions',
]);

/**
 * One kubeconfig file, if the lean path can serve it; else why not (client-node serves it).
 * `server` and `namespace` are read either way, so a delegated client still knows them at once.
 */
export function kubeconfigCredentials(path: string): CredentialSource {
  const doc = parseKubeconfig(readFileSync(path, 'utf8')) as KubeconfigFile | null;
  const base = dirname(resolve(path));
  const file = (p: unknown) => (isAbsolute(String(p)) ? String(p) : join(base, String(p)));
  const name = doc?.['current-context'];
  const ctx = doc?.contexts?.find((c) => c.name === name)?.context;
  if (!doc || !ctx) throw new Error(`kubeconfig ${path}: no current context`);
  const cluster = doc.clusters?.find((c) => c.name === ctx.cluster)?.cluster;
  if (!cluster || typeof cluster.server !== 'string')
    throw new Error(`kubeconfig ${path}: the current context's cluster has no server`);
  const user = doc.users?.find((u) => u.name === ctx.user)?.user ?? {};
  const server = cluster.server.replace(/\/+$/, '');
  const namespace = ctx.namespace ?? 'default';
  const odd = [
    ...Object.keys(cluster).filter((k) => !CLUSTER_KEYS.has(k)),
    ...Object.keys(user).filter((k) => !USER_KEYS.has(k)),
  ];
  if (odd.length) return { kind: 'delegate', kubeconfig: path, server, namespace, reason: odd.join(', ') };

  const bytes = (data: unknown, p: unknown): Buffer | undefined =>
    typeof data === 'string'
      ? Buffer.from(data, 'base64')
      : p !== undefined
        ? readFileSync(file(p))
        : undefined;
  const ca = bytes(cluster['certificate-authority-data'], cluster['certificate-authority']);
  const cert = bytes(user['client-certificate-data'], user['client-certificate']);
  const key = bytes(user['client-key-data'], user['client-key']);
  const insecure = cluster['insecure-skip-tls-verify'] === true;
  const serverName = typeof cluster['tls-server-name'] === 'string' ? cluster['tls-server-name'] : undefined;
  const tokenFile = typeof user.tokenFile === 'string' ? new WatchedFile(file(user.tokenFile)) : undefined;
  const token = typeof user.token === 'string' ? user.token : undefined;
  const basic =
    typeof user.username === 'string'
      ? Buffer.from(`${user.username}:${String(user.password ?? '')}`).toString('base64')
      : undefined;
  return {
    kind: 'lean',
    credentials: {
      server,
      namespace,
      apply(opts) {
        if (ca) opts.ca = ca;
        if (cert) opts.cert = cert;
        if (key) opts.key = key;
        if (insecure) opts.rejectUnauthorized = false;
        if (serverName) opts.servername = serverName;
        const t = tokenFile?.read() ?? token;
        if (t) bearer(opts, t);
        else if (basic)
          opts.headers = { ...(opts.headers as Record<string, string>), Authorization: `Basic ${basic}` };
      },
    },
  };
}

/**
 * client-node's default lookup, on the lean path where it can be: the given file, else
 * $KUBECONFIG (one file), else ~/.kube/config, else the in-cluster service account. With none of
 * them it throws (client-node would fall back to http://localhost:8080 and fail later with a
 * message about TLS that names none of the places it looked).
 */
export function findCredentials(kubeconfig?: string, env = process.env): CredentialSource {
  if (kubeconfig) return kubeconfigCredentials(kubeconfig);
  const fromEnv = env.KUBECONFIG;
  if (fromEnv) {
    const files = fromEnv.split(process.platform === 'win32' ? ';' : ':').filter(Boolean);
    if (files.length === 1) return kubeconfigCredentials(files[0]!);
    return { kind: 'delegate', reason: 'several kubeconfig files in $KUBECONFIG' };
  }
  const home = join(env.HOME ?? homedir(), '.kube', 'config');
  if (existsSync(home)) return kubeconfigCredentials(home);
  if (env.KUBERNETES_SERVICE_HOST && existsSync(join(SERVICE_ACCOUNT_DIR, 'token')))
    return { kind: 'lean', credentials: inClusterCredentials(env) };
  throw new Error(
    `$KUBECONFIG is not set, ${home} does not exist, and this is not a pod with a service account`,
  );
}
