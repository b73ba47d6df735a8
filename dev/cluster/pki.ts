import { execFile } from 'node:child_process';
import { mkdir, writeFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';

const run = promisify(execFile);

/**
 * The dev cluster's certificates, made with the system's `openssl` (Node can sign nothing).
 * One CA signs the API server's serving certificate and every client certificate; a client's
 * certificate says who it is (CN = user, O = groups), which is how tests act as restricted
 * identities. ECDSA P-256 keys: quick to make, accepted by kube-apiserver and Node's TLS.
 */
export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  saKey: string;
  saPub: string;
}

export interface ClientCredentials {
  cert: string;
  key: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await run('openssl', args, { cwd });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT')
      throw new Error('openssl is needed to make the dev cluster certificates (apt-get install openssl)', {
        cause: e,
      });
    throw new Error(`openssl ${args[0]} failed: ${err.stderr ?? err.message}`, { cause: e });
  }
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

async function sign(pki: Pki, name: string, subject: string, extensions: string): Promise<ClientCredentials> {
  const d = pki.dir;
  const csr = join(d, `${name}.csr`);
  const ext = join(d, `${name}.ext`);
  await openssl(['req', '-new', ...EC, '-keyout', `${name}.key`, '-out', csr, '-subj', subject], d);
  await writeFile(ext, extensions);
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      pki.caCert,
      '-CAkey',
      pki.caKey,
      '-set_serial',
      `0x${randomBytes(16).toString('hex')}`,
      '-days',
      '365',
      '-extfile',
      ext,
      '-out',
      `${name}.crt`,
    ],
    d,
  );
  await rm(csr, { force: true });
  await rm(ext, { force: true });
  return { cert: join(d, `${name}.crt`), key: join(d, `${name}.key`) };
}

export async function createPki(dir: string, extraServerIps: readonly string[] = []): Promise<Pki> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const pki: Pki = {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    serverCert: join(dir, 'apiserver.crt'),
    serverKey: join(dir, 'apiserver.key'),
    saKey: join(dir, 'sa.key'),
    saPub: join(dir, 'sa.pub'),
  };
  await openssl(
    [
      'req',
      '-x509',
      ...EC,
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '3650',
      '-subj',
      '/CN=ctopo-dev-cluster-ca',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
    ],
    dir,
  );
  await sign(
    pki,
    'apiserver',
    '/CN=kube-apiserver',
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' +
      `subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local${extraServerIps.map((ip) => `,IP:${ip}`).join('')}\n`,
  );
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'sa.key'], dir);
  await openssl(['ec', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  return pki;
}

/** A serving certificate for `ips`, signed by the dev cluster's CA (the real node's kubelet). */
export async function mintServing(pki: Pki, file: string, cn: string, ips: readonly string[]) {
  return sign(
    pki,
    file,
    `/CN=${cn}`,
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' +
      `subjectAltName=${ips.map((ip) => `IP:${ip}`).join(',')}\n`,
  );
}

/** A client certificate for `user` in `groups`, signed by the dev cluster's CA. */
export async function mintClient(
  pki: Pki,
  file: string,
  user: string,
  groups: readonly string[],
): Promise<ClientCredentials> {
  const safe = (s: string) => s.replace(/[/\\=+,]/g, '_');
  const subject = groups.map((g) => `/O=${safe(g)}`).join('') + `/CN=${safe(user)}`;
  return sign(
    pki,
    file,
    subject,
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n',
  );
}
