import type { z } from 'zod';

/**
 * One line per problem of a failed zod parse, `path: rule`, each path under `prefix`. Our schemas
 * describe the rule and never echo the value, so the lines are safe to print.
 */
export function issueLines(error: z.ZodError, prefix = ''): string[] {
  return error.issues.map((issue) => {
    const path = [prefix, ...issue.path.map(String)].filter((p) => p !== '').join('.');
    return `${path === '' ? '(root)' : path}: ${issue.message}`;
  });
}

/** Problems of `value` against `schema`, as `issueLines` gives them; empty when it parses. */
export function schemaProblems(schema: z.ZodType, value: unknown, prefix = ''): string[] {
  const parsed = schema.safeParse(value);
  return parsed.success ? [] : issueLines(parsed.error, prefix);
}

/**
 * Why a file could not be read, in words (`the config file x.yaml does not exist`), never a bare
 * errno code.
 */
export function unreadableFile(what: string, path: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const why: Record<string, string> = {
    ENOENT: 'does not exist',
    EACCES: 'cannot be read: permission denied',
    EPERM: 'cannot be read: permission denied',
    EISDIR: 'is a directory, not a file',
    ENOTDIR: 'does not exist (a part of its path is not a directory)',
  };
  return `${what} ${path} ${why[code ?? ''] ?? `cannot be read (${code ?? 'unknown error'})`}`;
}
