import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';

export interface KubeconfigInput {
  /** Directory the file is written to. */
  dir: string;
  /** `https://127.0.0.1:{port}`. */
  server: string;
  caPem: string;
  token: string;
  /** Default namespace of the context. */
  namespace?: string;
  /** File name in `dir`; default `kubeconfig`. */
  file?: string;
}

/**
 * Writes a kubeconfig (mode 0600) with the CA inline (`certificate-authority-data`) and a bearer token,
 * so both `@kubernetes/client-node` and kubectl verify the server and authenticate as a real
 * cluster client would. Returns the file path.
 */
export async function writeKubeconfig(input: KubeconfigInput): Promise<string> {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'test',
        cluster: {
          server: input.server,
          'certificate-authority-data': Buffer.from(input.caPem).toString('base64'),
        },
      },
    ],
    users: [{ name: 'test-client', user: { token: input.token } }],
    contexts: [
      {
        name: 'test',
        context: { cluster: 'test', user: 'test-client', namespace: input.namespace ?? 'default' },
      },
    ],
    'current-context': 'test',
    preferences: {},
  };
  const path = join(input.dir, input.file ?? 'kubeconfig');
  await writeFile(path, stringify(config), { mode: 0o600 });
  return path;
}
