import { readFile, writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';

/** Credentials a kubeconfig can carry: a client certificate, or a bearer token. */
export type Credentials = { cert: string; key: string } | { token: string };

/**
 * Writes a self-contained kubeconfig (certificates embedded), readable by kubectl, helm and
 * @kubernetes/client-node alike. Mode 0600: it holds a private key or a token.
 */
export async function writeKubeconfig(
  file: string,
  server: string,
  caCertFile: string,
  creds: Credentials,
  namespace?: string,
): Promise<void> {
  const b64 = async (f: string) => (await readFile(f)).toString('base64');
  const user =
    'token' in creds
      ? { token: creds.token }
      : { 'client-certificate-data': await b64(creds.cert), 'client-key-data': await b64(creds.key) };
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'ctopo-dev', cluster: { server, 'certificate-authority-data': await b64(caCertFile) } },
    ],
    users: [{ name: 'ctopo-dev-user', user }],
    contexts: [
      {
        name: 'ctopo-dev',
        context: { cluster: 'ctopo-dev', user: 'ctopo-dev-user', ...(namespace ? { namespace } : {}) },
      },
    ],
    'current-context': 'ctopo-dev',
  };
  await writeFile(file, stringify(doc), { mode: 0o600 });
}
