import { z } from 'zod';
import { wholeNumber } from '../config/sections.js';
import { isStoreKind, STORE_KINDS } from './registry.js';

/**
 * The store: its kind (unset: chosen from the environment, see `selectStoreKind`), its own
 * settings (checked by the store's `validate`), and its per-scope quotas for writes, metadata
 * reads and payload accesses (default: the quotas the store declares).
 */
export const storeSectionSchema = z
  .object({
    type: z
      .string()
      .refine(isStoreKind, { message: `must be one of ${STORE_KINDS.join(', ')}` })
      .optional(),
    settings: z.record(z.string(), z.unknown()).default({}),
    writesPerMinute: wholeNumber(1, 1_000_000).optional(),
    readsPerMinute: wholeNumber(1, 1_000_000).optional(),
    accessesPerMinute: wholeNumber(1, 10_000_000).optional(),
  })
  .strict();
