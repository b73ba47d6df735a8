import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  WatchedFile,
  findCredentials,
  inClusterCredentials,
  kubeconfigCredentials,
} from '../../../operator/kube/credentials.js';

const dir = mkdtempSync(join(tmpdir(), 'ctopo-creds-'));
const write = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const kubeconfig = (user: string, cluster = '') =>
  write(
    `kc-${Math.random().toString(36).slice(2)}.yaml`,
    `apiVersion: v1
kind: Config
current-context: c
contexts:
  - name: c
    context: { cluster: k, user: u, namespace: apps }
  - name: other
    context: { cluster: k, user: u }
clusters:
  - name: k
    cluster:
      server: https://127.0.0.1:6443/
      certificate-authority-data: ${Buffer.from('CA').toString('base64')}
${cluster}
users:
  - name: u
    user:
${user}
`,
  );
const applied = (c: { apply(o: RequestOptions): unknown }) => {
  const o: RequestOptions = { headers: { Accept: 'application/json' } };
  void c.apply(o);
  return o;
};

describe('credentials without client-node', () => {
  it('a kubeconfig with a token: server, namespace, CA and the bearer header', () => {
    const src = kubeconfigCredentials(kubeconfig('      token: abc'));
    if (src.kind !== 'lean') throw new Error(src.reason);
    expect(src.credentials.server).toBe('https://127.0.0.1:6443');
    expect(src.credentials.namespace).toBe('apps');
    const o = applied(src.credentials);
    expect(String(o.ca)).toBe('CA');
    expect(o.headers).toEqual({ Accept: 'application/json', Authorization: 'Bearer abc' });
  });

  it('a kubeconfig written as JSON (no YAML parser needed) or as YAML flow style reads the same', () => {
    const doc = {
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'c',
      contexts: [{ name: 'c', context: { cluster: 'k', user: 'u', namespace: 'apps' } }],
      clusters: [{ name: 'k', cluster: { server: 'https://127.0.0.1:6443/' } }],
      users: [{ name: 'u', user: { token: 'abc' } }],
    };
    const json = JSON.stringify(doc, null, 2);
    // Flow style with a comment and unquoted keys: YAML, though it starts with "{".
    const flow = `{ # a comment\n${json.slice(1).replace(/"([a-z-]+)":/g, '$1:')}`;
    for (const text of [json, flow]) {
      const src = kubeconfigCredentials(write(`kc-${Math.random().toString(36).slice(2)}`, text));
      if (src.kind !== 'lean') throw new Error(src.reason);
      expect(src.credentials.server).toBe('https://127.0.0.1:6443');
      expect(src.credentials.namespace).toBe('apps');
      expect(applied(src.credentials).headers).toMatchObject({ Authorization: 'Bearer abc' });
    }
  });

  it('a client certificate from files relative to the kubeconfig, and the TLS server name', () => {
    write('client.crt', 'CERT');
    write('client.key', 'KEY');
    const src = kubeconfigCredentials(
      kubeconfig(
        '      client-certificate: client.crt\n      client-key: client.key',
        '      tls-server-name: api.local',
      ),
    );
    if (src.kind !== 'lean') throw new Error(src.reason);
    const o = applied(src.credentials);
    expect([String(o.cert), String(o.key), o.servername]).toEqual(['CERT', 'KEY', 'api.local']);
    expect(o.headers).toEqual({ Accept: 'application/json' });
  });

  it('hands exec plugins, auth providers and proxies to client-node, knowing server and namespace', () => {
    const exec = kubeconfigCredentials(
      kubeconfig('      exec: { command: aws, apiVersion: client.authentication.k8s.io/v1 }'),
    );
    expect(exec).toMatchObject({
      kind: 'delegate',
      reason: 'exec',
      server: 'https://127.0.0.1:6443',
      namespace: 'apps',
    });
    expect(
      kubeconfigCredentials(kubeconfig('      token: x', '      proxy-url: http://proxy:3128')),
    ).toMatchObject({
      kind: 'delegate',
      reason: 'proxy-url',
    });
    expect(findCredentials(undefined, { KUBECONFIG: 'a:b' })).toMatchObject({ kind: 'delegate' });
  });

  it('no kubeconfig anywhere and not in a pod: says where it looked (no silent localhost:8080)', () => {
    const home = mkdtempSync(join(tmpdir(), 'ctopo-home-'));
    expect(() => findCredentials(undefined, { HOME: home })).toThrow(
      `$KUBECONFIG is not set, ${join(home, '.kube', 'config')} does not exist, and this is not a pod with a service account`,
    );
  });

  it('the in-cluster service account, its projected token re-read when the file changes', () => {
    const sa = mkdtempSync(join(tmpdir(), 'ctopo-sa-'));
    writeFileSync(join(sa, 'token'), 'one\n');
    writeFileSync(join(sa, 'ca.crt'), 'CA');
    writeFileSync(join(sa, 'namespace'), 'netzlive');
    const c = inClusterCredentials(
      { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      sa,
    );
    expect(c.server).toBe('https://[fd00::1]:443');
    expect(c.namespace).toBe('netzlive');
    expect(applied(c).headers).toMatchObject({ Authorization: 'Bearer one' });
    let t = 0;
    const token = new WatchedFile(join(sa, 'token'), () => t);
    expect(token.read()).toBe('one');
    writeFileSync(join(sa, 'token'), 'two-rotated\n');
    utimesSync(join(sa, 'token'), new Date(), new Date(Date.now() + 5000));
    expect(token.read()).toBe('one'); // looked at at most once a second
    t = 1000;
    expect(token.read()).toBe('two-rotated');
  });
});
