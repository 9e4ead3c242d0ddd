import { brokerConfigSchema } from '../brokers/config.js';

import { isPlainObject } from '../config/paths.js';

export { layerAt, valueAt } from '../config/paths.js';

/** A configuration layer: a partial config object in the adapter file's shape. */
export type Layer = Record<string, unknown>;

/** HyperFleet's name of our `pubsub` broker. */
export function brokerKind(type: unknown): unknown {
  return type === 'googlepubsub' ? 'pubsub' : type;
}

/** The keys a broker type accepts (from its schema), for dropping another type's settings. */
function brokerKeys(type: unknown): ReadonlySet<string> | undefined {
  const option = brokerConfigSchema.options.find((o) => o.shape.type.value === type);
  return option === undefined ? undefined : new Set(Object.keys(option.shape));
}

/**
 * `overlay` on top of `base` (neither is changed): objects merge key by key, anything else is
 * replaced. When the overlay switches the broker to another type, the settings below that only the
 * old type knows are dropped (a broker.yaml saying `rabbitmq` over a file saying `pubsub` keeps the
 * common `topic`, not `projectId`).
 */
export function mergeLayers(base: Layer, overlay: Layer, path = ''): Layer {
  const merged: Layer = { ...base };
  let source = base;
  if (path === 'broker' && overlay.type !== undefined && brokerKind(overlay.type) !== brokerKind(base.type)) {
    const keys = brokerKeys(brokerKind(overlay.type));
    source = Object.fromEntries(Object.entries(base).filter(([k]) => keys === undefined || keys.has(k)));
    for (const key of Object.keys(merged)) if (!(key in source)) delete merged[key];
  }
  for (const [key, value] of Object.entries(overlay)) {
    if (value === undefined) continue;
    const below = source[key];
    merged[key] =
      isPlainObject(value) && isPlainObject(below)
        ? mergeLayers(below, value, path === '' ? key : `${path}.${key}`)
        : value;
  }
  return merged;
}
