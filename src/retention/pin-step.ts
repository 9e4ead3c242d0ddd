import { PullSecretError } from '../errors/index.js';
import { fingerprint } from '../pullsecret/canonical.js';
import { validatePullSecret } from '../pullsecret/validate.js';
import type { PinFacts, ReconcileStep, StepContext } from '../reconcile/steps.js';
import { pinExpired, type Pin, type PinEnd, type PinStore } from './pin.js';

/** A pin as the status and the Job's result show it (digests and names only). */
export function pinFacts(pin: Pin): PinFacts {
  const facts: PinFacts = { sourceVersion: pin.sourceVersion, by: pin.by, at: pin.at };
  if (pin.version !== undefined) facts.version = pin.version;
  if (pin.reason !== undefined) facts.reason = pin.reason;
  if (pin.expiresAt !== undefined) facts.expiresAt = pin.expiresAt;
  return facts;
}

/**
 * The rollback pin's reconcile step (docs/retention.md, "Rollback and pin"): compares the spec's
 * own pull secret (`ctx.spec`, before any step changed it) with the pin. While the pin
 * holds, the payload becomes the pinned content and no later step changes it (`final`): every
 * reconcile path (event, resync, notification, admin reconcile, drift repair, transfer, entitlement
 * refresh) then serves the pinned content, a no-op when the store's latest already holds it. The
 * pin ends (deleted, logged, the spec served) when the spec's digest differs from the one pinned,
 * or at its expiry. A dry run changes no pin.
 *
 * Calls: one pin read (none when the store watches); under a pin, one store access of the pinned
 * version the first time (its content is immutable, kept while the pin holds); before writing the
 * spec's content, one fresh pin read.
 */
export function pinStep(pins: PinStore, now: () => number = Date.now): ReconcileStep {
  const contents = new Map<string, Buffer>();
  const end = async (ctx: StepContext, pin: Pin, why: PinEnd) => {
    contents.delete(pin.clusterId);
    if (!ctx.dryRun) await pins.delete(pin.clusterId, ctx.signal);
    ctx.log.info(
      { operation: 'rollback-pin', ended: why, source_version: pin.sourceVersion, version: pin.version },
      'Rollback pin ended: serving the spec again',
    );
  };
  const served = new WeakMap<StepContext, Pin>();
  return Object.freeze({
    async preparePayload(ctx, payload) {
      let pin = await pins.get(ctx.names.clusterId, ctx.signal);
      if (pin === undefined) return { payload };
      const spec = fingerprint(ctx.spec);
      if (pinExpired(pin, now())) {
        await end(ctx, pin, 'expired');
        return { payload };
      }
      if (pin.specSha256 !== undefined && pin.specSha256 !== spec) {
        await end(ctx, pin, 'spec-changed');
        return { payload };
      }
      if (pin.specSha256 === undefined && !ctx.dryRun) {
        pin = { ...pin, specSha256: spec };
        await pins.put(pin, ctx.signal);
      }
      const pinned = await pinnedContent(ctx, pin, contents);
      served.set(ctx, pin);
      return { payload: pinned, final: true, facts: { pin: pinFacts(pin) } };
    },
    // The pinned content written again (someone added a version meanwhile): the pin follows the
    // new version, which retention then keeps as current, not the superseded one it may retire.
    async afterProvision(ctx, pushed) {
      const pin = served.get(ctx);
      if (ctx.dryRun || pin === undefined || pushed.outcome === 'unchanged' || pushed.version === undefined)
        return undefined;
      await pins.put({ ...pin, version: pushed.version }, ctx.signal);
      return undefined;
    },
    // Before a write of the spec's content: a pin another replica just recorded may not have
    // reached this one's watch yet. Read it fresh (writes are rare; a no-op never gets here).
    async beforeWrite(ctx) {
      if (served.has(ctx)) return undefined;
      const pin = await pins.get(ctx.names.clusterId, ctx.signal, true);
      if (pin === undefined || pinExpired(pin, now())) return undefined;
      if (pin.specSha256 !== undefined && pin.specSha256 !== fingerprint(ctx.spec)) return undefined;
      throw new PullSecretError(
        'STORE_CONFLICT',
        `a rollback pin of cluster ${ctx.names.clusterId} was recorded meanwhile; the reconcile is retried`,
      );
    },
  } satisfies ReconcileStep);
}

/** The pinned version's bytes (cached per cluster and version), checked against the pin's digest. */
async function pinnedContent(ctx: StepContext, pin: Pin, contents: Map<string, Buffer>): Promise<Buffer> {
  const version = pin.version ?? pin.sourceVersion;
  const key = `${ctx.store.secretPath(ctx.names.secretId)}@${version}`;
  let data = contents.get(pin.clusterId + '\n' + key);
  if (data === undefined) {
    data = (await ctx.store.accessVersion(ctx.names.secretId, version, { signal: ctx.signal })).data;
    if (fingerprint(data) !== pin.contentSha256)
      throw new PullSecretError(
        'CONFIG_INVALID',
        `version ${version} of ${ctx.store.secretPath(ctx.names.secretId)} does not hold the content ` +
          `the rollback pinned; release the pin (pull-secret rollback --release) and roll back again`,
      );
    for (const k of contents.keys()) if (k.startsWith(pin.clusterId + '\n')) contents.delete(k);
    contents.set(pin.clusterId + '\n' + key, data);
  }
  ctx.registerCredentials(data.toString('utf8'));
  validatePullSecret(data.toString('utf8'), ctx.limits);
  return data;
}
