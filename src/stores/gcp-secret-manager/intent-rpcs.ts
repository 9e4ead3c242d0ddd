/**
 * The two Secret Manager RPCs a write intent is held with (write-intent.ts): GetSecret for the
 * etag and annotations, and UpdateSecret of the annotations under that etag.
 */
import type { SecretManagerServiceClient } from '@google-cloud/secret-manager';
import { callExpecting, type ApiCallOptions } from './api-call.js';
import type { IntentRpcs } from './write-intent.js';

/**
 * GetSecret and UpdateSecret(annotations) of the secret `path`; `callOptions(detached)` gives each
 * call's options (`detached`: not cut short by the caller's signal).
 */
export function annotationRpcs(
  client: SecretManagerServiceClient,
  path: string,
  callOptions: (detached: boolean) => ApiCallOptions,
): Pick<IntentRpcs, 'getSecret' | 'updateAnnotations'> {
  return {
    getSecret: async () => {
      const result = await callExpecting(
        { method: 'GetSecret', resource: path },
        callOptions(false),
        ['NOT_FOUND'],
        (o) => client.getSecret({ name: path }, o),
      );
      return result.ok
        ? { etag: result.value[0].etag ?? '', annotations: { ...(result.value[0].annotations ?? {}) } }
        : undefined;
    },
    updateAnnotations: async (annotations, etag, detached = false) => {
      const update = {
        secret: { name: path, annotations, etag },
        updateMask: { paths: ['annotations'] },
      };
      // A stale etag is ABORTED (AIP-154); FAILED_PRECONDITION is accepted as the same answer.
      const result = await callExpecting(
        { method: 'UpdateSecret', resource: path },
        callOptions(detached),
        ['ABORTED', 'FAILED_PRECONDITION'],
        (o) => client.updateSecret(update, o),
      );
      return result.ok ? (result.value[0].etag ?? '') : undefined;
    },
  };
}
