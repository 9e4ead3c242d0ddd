/** Throwaway entitlement certificates for the account-service stand-in (not production code). */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A self-signed entitlement certificate and its key (PEM), as the stand-in issues them. */
export interface StandInCertificate {
  cert: string;
  key: string;
}

/**
 * Issues a throwaway self-signed certificate with `openssl` (P-256, CN = the cluster id), valid for
 * `days` days, as the test PKI helper does. Not production code.
 *
 * @throws when `openssl` is missing or fails
 */
export async function issueSelfSignedCertificate(
  clusterId: string,
  days: number,
): Promise<StandInCertificate> {
  const dir = await mkdtemp(join(tmpdir(), 'entitlement-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    await run('openssl', [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      String(days),
      '-subj',
      `/CN=${clusterId}/O=stand-in-entitlement`,
    ]);
    return { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
