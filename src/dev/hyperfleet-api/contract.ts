import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import * as ajvFormats from 'ajv-formats';
import { parse } from 'yaml';
import type { ValidationError } from '../../hyperfleet/types.js';

/** The OpenAPI document shipped with the package (the HyperFleet API contract we implement). */
export const CONTRACT_PATH = fileURLToPath(
  new URL('../../../contracts/hyperfleet-api-openapi-1.0.25.yaml', import.meta.url),
);

const SCHEMA_ID = 'https://hyperfleet.local/openapi-1.0.25';
const INT32 = 2 ** 31;

/** The contract's schemas compiled with ajv, and its response table. */
export interface Contract {
  /** Field-level errors of `value` against `components.schemas[name]`; empty when valid. */
  validate(name: string, value: unknown): ValidationError[];
  /**
   * Checks an answer against what the contract declares for `method pathTemplate` and `status`
   * (falling back to `default`): content type and body schema. Returns the violations, empty when valid.
   */
  checkResponse(
    pathTemplate: string | undefined,
    method: string,
    status: number,
    contentType: string | undefined,
    body: unknown,
  ): string[];
}

interface MediaTypes {
  [mediaType: string]: { schema?: { $ref?: string } } | undefined;
}
interface Operation {
  responses?: Record<string, { content?: MediaTypes } | undefined>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation | undefined> | undefined>;
  components: { schemas: Record<string, unknown> };
}

const loaded = new Map<string, Contract>();

/**
 * Loads and compiles the contract once per path. OpenAPI 3.0 schemas are JSON Schema with a few
 * extras: `example` is declared as an annotation, `int32`/`int64` as formats, and component refs
 * are rewritten to `$defs` so ajv can run in strict mode.
 *
 * @throws when the file is missing or a schema does not compile (a packaging bug)
 */
export function loadContract(path = CONTRACT_PATH): Contract {
  const cached = loaded.get(path);
  if (cached !== undefined) return cached;
  const document = parse(readFileSync(path, 'utf8')) as OpenApiDocument;
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false });
  const addFormats = (ajvFormats as unknown as { default: (a: Ajv) => Ajv }).default;
  addFormats(ajv);
  ajv.addKeyword({
    keyword: 'example',
    schemaType: ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'],
  });
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= -INT32 && n < INT32,
  });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addSchema({ $id: SCHEMA_ID, $defs: rewriteRefs(document.components.schemas) });
  const validators = new Map<string, ValidateFunction>();
  const validator = (name: string): ValidateFunction => {
    let fn = validators.get(name);
    if (fn === undefined) {
      fn = ajv.getSchema(`${SCHEMA_ID}#/$defs/${name}`);
      if (fn === undefined) throw new Error(`the contract has no schema ${name}`);
      validators.set(name, fn);
    }
    return fn;
  };

  const contract: Contract = {
    validate(name, value) {
      const fn = validator(name);
      return fn(value) ? [] : (fn.errors ?? []).map(toValidationError);
    },
    checkResponse(pathTemplate, method, status, contentType, body) {
      // 204 (a status report discarded as stale) is not in the contract's response table; it never has a body.
      if (status === 204) return body === undefined ? [] : ['204 must have no body'];
      const responses =
        pathTemplate === undefined
          ? undefined
          : document.paths[pathTemplate]?.[method.toLowerCase()]?.responses;
      const declared = responses?.[String(status)] ??
        responses?.default ?? {
          content: {
            'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetails' } },
          },
        };
      const content = declared.content;
      if (content === undefined) return body === undefined ? [] : [`${status} must have no body`];
      const mediaType = (contentType ?? '').split(';')[0]?.trim() ?? '';
      const schemaRef = content[mediaType]?.schema?.$ref;
      if (schemaRef === undefined)
        return [
          `${status} must be ${Object.keys(content).join(' or ')}, not ${mediaType || 'no content type'}`,
        ];
      const name = schemaRef.replace('#/components/schemas/', '');
      return contract
        .validate(name, body)
        .map((e) => `${status} ${name}: ${e.field || '(root)'} ${e.message}`);
    },
  };
  loaded.set(path, contract);
  return contract;
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      key === '$ref' && typeof v === 'string'
        ? v.replace('#/components/schemas/', '#/$defs/')
        : rewriteRefs(v),
    ]),
  );
}

const CONSTRAINTS: Record<string, string> = {
  required: 'required',
  minimum: 'min',
  exclusiveMinimum: 'min',
  minItems: 'min',
  minProperties: 'min',
  maximum: 'max',
  exclusiveMaximum: 'max',
  maxItems: 'max',
  maxProperties: 'max',
  minLength: 'min_length',
  maxLength: 'max_length',
  pattern: 'pattern',
  enum: 'enum',
  format: 'format',
  uniqueItems: 'unique',
};

/** ajv's error as the contract's `ValidationError`: a dotted field path (`conditions[0].status`), never the value. */
function toValidationError(error: ErrorObject): ValidationError {
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  const extra = params.missingProperty ?? params.additionalProperty;
  if (extra !== undefined) segments.push(extra);
  const field = segments.reduce(
    (path, s) => (/^\d+$/.test(s) ? `${path}[${s}]` : path === '' ? s : `${path}.${s}`),
    '',
  );
  const constraint = CONSTRAINTS[error.keyword];
  const message =
    error.keyword === 'additionalProperties' ? 'is not allowed' : (error.message ?? 'is invalid');
  return { field, message, ...(constraint === undefined ? {} : { constraint }) };
}
