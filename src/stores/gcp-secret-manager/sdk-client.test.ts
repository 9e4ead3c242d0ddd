import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSdkClient } from './sdk-client.js';

interface ChannelView {
  getChannel(): { internalChannel: { options: Record<string, unknown> } };
}

// grpc-js grows the reconnect backoff to 120 s by default (DEFAULT_MAX_BACKOFF_MS in
// https://github.com/grpc/grpc-node/blob/master/packages/grpc-js/src/backoff-timeout.ts): calls kept failing long
// after a Secret Manager outage ended. The bound must reach the channel gax builds, not only the client options.
test('the SDK channel bounds its reconnect backoff to seconds', async () => {
  const client = createSdkClient({ endpoint: '127.0.0.1:9', insecure: true } as Parameters<
    typeof createSdkClient
  >[0]);
  try {
    void client.initialize();
    const stub = await (client as unknown as { secretManagerServiceStub: Promise<ChannelView> })
      .secretManagerServiceStub;
    const { options } = stub.getChannel().internalChannel;
    assert.equal(options['grpc.max_reconnect_backoff_ms'], 5000);
    assert.equal(options['grpc.initial_reconnect_backoff_ms'], 1000);
  } finally {
    await client.close();
  }
});
