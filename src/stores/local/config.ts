import { z } from 'zod';
import type { EnvSetting } from '../factory.js';
import { StoreKey, decodeKeyBase64, KEY_BYTES } from './key.js';

/** Default store directory, relative to the working directory. */
export const DEFAULT_LOCAL_STORE_DIR = '.pull-secret/store';

/** Settings of the local encrypted store. */
export interface LocalStoreConfig {
  /** Store directory; relative paths are resolved against the working directory. */
  dir: string;
  /** Key given directly (LOCAL_STORE_KEY); wins over `keyFile`. */
  key?: StoreKey;
  /** Key file; default `{dir}/store.key`, generated on first use. */
  keyFile?: string;
}

/**
 * Schema of `LocalStoreConfig`. Messages describe the rule and never echo the value (the key is a
 * secret); the parsed key is wrapped in `StoreKey` so it cannot be printed by accident.
 */
export const localStoreConfigSchema: z.ZodType<LocalStoreConfig> = z
  .object({
    dir: z.string().min(1).default(DEFAULT_LOCAL_STORE_DIR),
    key: z
      .string()
      .optional()
      .transform((value, ctx) => {
        if (value === undefined) return undefined;
        const bytes = decodeKeyBase64(value);
        if (bytes === undefined) {
          ctx.addIssue({
            code: 'custom',
            message:
              `must be the base64 encoding of exactly ${KEY_BYTES} bytes (e.g. the output of ` +
              `\`openssl rand -base64 32\`)`,
          });
          return z.NEVER;
        }
        const key = new StoreKey(bytes);
        bytes.fill(0);
        return key;
      }),
    keyFile: z.string().min(1).optional(),
  })
  .strict();

/** Environment variables of the local store. */
export const localStoreEnv: Readonly<Record<string, EnvSetting>> = {
  LOCAL_STORE_DIR: {
    key: 'dir',
    help:
      `Directory of the local encrypted secret store (default ${DEFAULT_LOCAL_STORE_DIR}, relative ` +
      `to the working directory).`,
  },
  LOCAL_STORE_KEY: {
    key: 'key',
    secret: true,
    help:
      `Store encryption key: base64 of exactly ${KEY_BYTES} bytes (\`openssl rand -base64 32\`). ` +
      `Wins over LOCAL_STORE_KEY_FILE.`,
  },
  LOCAL_STORE_KEY_FILE: {
    key: 'keyFile',
    help:
      'File holding the store key (default {LOCAL_STORE_DIR}/store.key, generated on first use with ' +
      'mode 0600; must not be readable by group or others).',
  },
};
