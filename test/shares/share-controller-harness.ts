// The share controller as the share tests run it: against a Kubernetes test server, its logs and
// metrics kept for the canary checks.
import { Writable } from 'node:stream';
import { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { createLogger } from '../../src/observability/logger.js';
import { ShareController } from '../../src/shares/controller.js';
import { ShareMetrics } from '../../src/shares/metrics.js';
import type { KubernetesTestServer } from '../servers/kubernetes/server.js';

/** A started controller (recheck every hour: the tests recheck by hand), its metrics and log lines. */
export function startShareController(server: KubernetesTestServer): {
  controller: ShareController;
  registry: Registry;
  logs: string[];
} {
  const kc = new KubeConfig();
  kc.loadFromFile(server.kubeconfigPath);
  const registry = new Registry();
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const controller = new ShareController({
    kubeConfig: kc,
    metrics: new ShareMetrics(registry),
    logger: createLogger({ level: 'debug', destination: sink }),
    recheckSeconds: 3600,
  });
  controller.start();
  return { controller, registry, logs };
}
