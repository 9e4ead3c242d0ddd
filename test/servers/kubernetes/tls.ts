import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** PEM material of a throwaway CA and a server certificate it signed, for 127.0.0.1 and localhost. */
export interface TestPki {
  caPem: string;
  certPem: string;
  keyPem: string;
}

/**
 * Generates a test CA and a server certificate with `openssl` in `dir` (the caller owns and removes
 * it). P-256 keys keep this fast; the SANs cover how clients reach a loopback server, because both
 * Node and Go (kubectl) verify the IP/DNS SAN, not the CN.
 *
 * @throws when `openssl` is missing or fails; the error carries its stderr.
 */
export async function generateTestPki(dir: string): Promise<TestPki> {
  const p = (name: string) => join(dir, name);
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run('openssl', [
    'req',
    '-x509',
    ...ecKey,
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.crt'),
    '-days',
    '2',
    '-subj',
    '/CN=pull-secret-test-ca',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await run('openssl', [
    'req',
    '-new',
    ...ecKey,
    '-keyout',
    p('server.key'),
    '-out',
    p('server.csr'),
    '-subj',
    '/CN=kube-apiserver',
  ]);
  await writeFile(
    p('server.ext'),
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '',
    ].join('\n'),
  );
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    p('server.csr'),
    '-CA',
    p('ca.crt'),
    '-CAkey',
    p('ca.key'),
    // An explicit random serial avoids openssl writing a .srl file next to the CA.
    '-set_serial',
    `0x${randomBytes(8).toString('hex')}`,
    '-days',
    '2',
    '-sha256',
    '-extfile',
    p('server.ext'),
    '-out',
    p('server.crt'),
  ]);
  const [caPem, certPem, keyPem] = await Promise.all(
    ['ca.crt', 'server.crt', 'server.key'].map((f) => readFile(p(f), 'utf8')),
  );
  return { caPem: caPem ?? '', certPem: certPem ?? '', keyPem: keyPem ?? '' };
}
