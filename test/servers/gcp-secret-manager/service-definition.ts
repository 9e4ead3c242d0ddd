import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import type * as grpc from '@grpc/grpc-js';

/**
 * The Secret Manager v1 service definition, loaded from the `.proto` files that ship inside
 * `@google-cloud/secret-manager` (the very API the SDK speaks). Its imports (`google/api/*`,
 * `google/iam/v1/*`, `google/rpc/*`, `google/protobuf/*`) live in the `build/protos` folder of the
 * SDK's own google-gax, which is the second include path.
 */

const SERVICE = 'google.cloud.secretmanager.v1.SecretManagerService';

/** Wire options: camelCase fields, int64 as strings, enums by name, absent fields stay absent. */
const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: false,
  oneofs: true,
};

function protoIncludeDirs(): string[] {
  const require = createRequire(import.meta.url);
  const sdkPackageJson = require.resolve('@google-cloud/secret-manager/package.json');
  // google-gax does not export its package.json; its entry point is build/src/index.js.
  const gaxEntry = createRequire(sdkPackageJson).resolve('google-gax');
  return [join(dirname(sdkPackageJson), 'build', 'protos'), join(dirname(gaxEntry), '..', 'protos')];
}

let cached: grpc.ServiceDefinition | undefined;

/** The `SecretManagerService` definition for `grpc.Server.addService`. */
export function secretManagerServiceDefinition(): grpc.ServiceDefinition {
  if (cached !== undefined) return cached;
  const includeDirs = protoIncludeDirs();
  const definition = protoLoader.loadSync(['google/cloud/secretmanager/v1/service.proto'], {
    ...LOADER_OPTIONS,
    includeDirs,
  });
  const service = definition[SERVICE];
  if (service === undefined || 'format' in service) {
    throw new Error(`${SERVICE} not found in the protos under ${includeDirs.join(', ')}`);
  }
  cached = service;
  return cached;
}
