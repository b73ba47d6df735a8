import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from './erlang.js';

/**
 * What TLS distribution (`-proto_dist inet_tls` or `inet6_tls`) needs on loopback: a CA, one node
 * certificate it signs for `address`, and the `-ssl_dist_optfile` naming them (peers verified
 * both ways). The certificate carries `address` as an IP and as a DNS SAN: OTP checks a peer's
 * host part as a host name, so a certificate with an IP SAN alone is refused, and so is a
 * self-signed one. Returns the optfile's path.
 */
export async function distTlsOptfile(dir: string, address: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  const f = (n: string) => join(dir, n);
  const openssl = async (args: string[]) => {
    const r = await run('openssl', args, env, 60_000);
    if (r.code !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
  };
  const key = ['-newkey', 'rsa:2048', '-nodes'];
  await openssl([
    'req',
    '-x509',
    ...key,
    '-days',
    '2',
    '-subj',
    '/CN=dist-ca',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
  ]);
  await openssl(['req', ...key, '-subj', `/CN=${address}`, '-keyout', f('node.key'), '-out', f('node.csr')]);
  await writeFile(
    f('ext.cnf'),
    `subjectAltName=IP:${address},DNS:${address}\nextendedKeyUsage=serverAuth,clientAuth\n`,
  );
  await openssl([
    'x509',
    '-req',
    '-in',
    f('node.csr'),
    '-CA',
    f('ca.crt'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    f('ext.cnf'),
    '-out',
    f('node.crt'),
  ]);
  const side = `[{certfile, "${f('node.crt')}"}, {keyfile, "${f('node.key')}"}, {cacertfile, "${f('ca.crt')}"}, {verify, verify_peer}`;
  await writeFile(
    f('dist.conf'),
    `[{server, ${side}, {fail_if_no_peer_cert, true}]}, {client, ${side}]}].\n`,
  );
  return f('dist.conf');
}
