import type { IncomingMessage } from 'node:http';
import type { Answer } from './http-io.js';
import { readJsonBody } from './http-io.js';
import { ProblemError } from './problem.js';
import type { RouteMatch } from './routes.js';
import type { ClusterStore } from './store.js';

/** What a handler did: the answer, whether the state changed (→ persist), and a discard reason. */
export interface HandlerResult {
  answer: Answer;
  changed: boolean;
  discarded?: string;
}

export interface HandlerContext {
  store: ClusterStore;
  maxBodyBytes: number;
}

/**
 * Carries out one matched request against the store. Success answers follow the contract's response
 * table (200 / 201 / 202, and 204 for a discarded status report); failures are thrown as ProblemError.
 *
 * @throws ProblemError
 */
export async function dispatch(
  match: RouteMatch,
  req: IncomingMessage,
  ctx: HandlerContext,
): Promise<HandlerResult> {
  const { store } = ctx;
  const id = match.clusterId ?? '';
  const body = async (): Promise<unknown> => readJsonBody(req, ctx.maxBodyBytes);
  switch (match.route) {
    case 'listClusters':
      return unchanged({ status: 200, body: { kind: 'ClusterList', ...store.listClusters(match.query) } });
    case 'createCluster':
      return { answer: { status: 201, body: store.createCluster(await body()) }, changed: true };
    case 'getCluster': {
      const cluster = store.getCluster(id);
      if (cluster === undefined)
        throw new ProblemError('notFound', `Cluster with id='${id.slice(0, 64)}' not found`);
      return unchanged({ status: 200, body: cluster });
    }
    case 'patchCluster':
      return { answer: { status: 200, body: store.patchCluster(id, await body()) }, changed: true };
    case 'deleteCluster':
      return { answer: { status: 202, body: store.deleteCluster(id) }, changed: true };
    case 'listStatuses':
      return unchanged({
        status: 200,
        body: { kind: 'AdapterStatusList', ...store.listStatuses(id, match.query) },
      });
    case 'putStatus': {
      const result = store.putStatus(id, await body());
      if (result.outcome === 'discarded')
        return { answer: { status: 204 }, changed: false, discarded: result.reason };
      return { answer: { status: 201, body: result.status }, changed: true };
    }
    case 'unmatched': {
      const refusal = match.refusal ?? {
        kind: 'routeNotFound' as const,
        detail: 'The requested endpoint does not exist',
      };
      req.resume();
      throw new ProblemError(
        refusal.kind,
        refusal.detail,
        [],
        refusal.allow === undefined ? {} : { allow: refusal.allow.join(', ') },
      );
    }
  }
}

function unchanged(answer: Answer): HandlerResult {
  return { answer, changed: false };
}
