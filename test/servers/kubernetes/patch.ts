import { badRequest, unsupportedMediaType, StatusError } from './status.js';
import { clone, isRecord } from './types.js';

/**
 * The three PATCH formats of the API server: JSON Patch (RFC 6902), JSON Merge Patch (RFC 7386),
 * and strategic merge patch. The strategic form is approximated: maps merge like a merge patch,
 * lists of objects with a `name` merge by name (containers, env, volumes), other lists are
 * replaced, and the `$patch`/`$retainKeys`/`$setElementOrder` directives kubectl sends are honoured
 * or dropped.
 */

function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return clone(patch);
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

function strategicList(target: unknown, patch: unknown[]): unknown[] {
  const byName = patch.every((p) => isRecord(p) && typeof p.name === 'string');
  if (!byName || !Array.isArray(target))
    return patch.filter((p) => !(isRecord(p) && p.$patch === 'delete')).map(clone);
  const out = [...(target as unknown[])];
  for (const item of patch as Record<string, unknown>[]) {
    const index = out.findIndex((t) => isRecord(t) && t.name === item.name);
    if (item.$patch === 'delete') {
      if (index >= 0) out.splice(index, 1);
    } else if (index >= 0) out[index] = strategicMerge(out[index], item);
    else out.push(strategicMerge(undefined, item));
  }
  return out;
}

function strategicMerge(target: unknown, patch: unknown): unknown {
  if (Array.isArray(patch)) return strategicList(target, patch);
  if (!isRecord(patch)) return clone(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _ignored, ...rest } = patch;
    return clone(rest);
  }
  if (patch.$patch === 'delete') return undefined;
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) continue;
    if (value === null) delete out[key];
    else {
      const merged = strategicMerge(out[key], value);
      if (merged === undefined) delete out[key];
      else out[key] = merged;
    }
  }
  return out;
}

type Container = Record<string, unknown> | unknown[];

function parsePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw badRequest(`invalid JSON pointer ${JSON.stringify(path)}`);
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function resolveParent(doc: unknown, tokens: string[]): { parent: Container; key: string } {
  let node: unknown = doc;
  for (const token of tokens.slice(0, -1)) {
    node = Array.isArray(node) ? node[Number(token)] : isRecord(node) ? node[token] : undefined;
    if (node === undefined)
      throw new StatusError(422, 'Invalid', `doc is missing path: "/${tokens.join('/')}"`);
  }
  if (!Array.isArray(node) && !isRecord(node))
    throw new StatusError(422, 'Invalid', `doc is missing path: "/${tokens.join('/')}"`);
  return { parent: node, key: tokens[tokens.length - 1] ?? '' };
}

function getAt(doc: unknown, path: string): unknown {
  let node: unknown = doc;
  for (const token of parsePointer(path))
    node = Array.isArray(node) ? node[Number(token)] : isRecord(node) ? node[token] : undefined;
  return node;
}

function removeAt(doc: unknown, path: string): unknown {
  const { parent, key } = resolveParent(doc, parsePointer(path));
  if (Array.isArray(parent)) return parent.splice(Number(key), 1)[0];
  if (!Object.hasOwn(parent, key)) throw new StatusError(422, 'Invalid', `doc is missing key: ${path}`);
  const value = parent[key];
  delete parent[key];
  return value;
}

function addAt(doc: unknown, path: string, value: unknown, replace: boolean): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return clone(value);
  const { parent, key } = resolveParent(doc, tokens);
  if (Array.isArray(parent)) {
    const index = key === '-' ? parent.length : Number(key);
    parent.splice(index, replace ? 1 : 0, clone(value));
  } else {
    if (replace && !Object.hasOwn(parent, key))
      throw new StatusError(422, 'Invalid', `doc is missing key: ${path}`);
    parent[key] = clone(value);
  }
  return doc;
}

function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw badRequest('json patch must be an array of operations');
  let doc = clone(target);
  for (const op of ops) {
    if (!isRecord(op) || typeof op.path !== 'string') throw badRequest('invalid json patch operation');
    switch (op.op) {
      case 'add':
        doc = addAt(doc, op.path, op.value, false);
        break;
      case 'replace':
        doc = addAt(doc, op.path, op.value, true);
        break;
      case 'remove':
        removeAt(doc, op.path);
        break;
      case 'move':
      case 'copy': {
        const from = String(op.from);
        const value = op.op === 'move' ? removeAt(doc, from) : clone(getAt(doc, from));
        doc = addAt(doc, op.path, value, false);
        break;
      }
      case 'test':
        if (JSON.stringify(getAt(doc, op.path)) !== JSON.stringify(op.value))
          throw new StatusError(422, 'Invalid', `testing value ${op.path} failed`);
        break;
      default:
        throw badRequest(`unexpected json patch operation ${JSON.stringify(op.op)}`);
    }
  }
  return doc;
}

/**
 * Applies a PATCH body to `target` (not modified) by its content type.
 * @throws StatusError 415 for unknown types, 400/422 for malformed patches.
 */
export function applyPatch(contentType: string, target: unknown, patch: unknown): unknown {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  switch (type) {
    case 'application/json-patch+json':
      return jsonPatch(target, patch);
    case 'application/merge-patch+json':
      return mergePatch(target, patch);
    case 'application/strategic-merge-patch+json':
      return strategicMerge(target, patch);
    default:
      throw unsupportedMediaType(type);
  }
}
