import { writeSync } from 'node:fs';
import { toPullSecretError } from '../errors/index.js';
import { redactor } from '../pullsecret/redact.js';

/** Writes text to stdout synchronously, through the redactor. */
export function printOut(text: string): void {
  writeSync(1, redactor.redact(text.endsWith('\n') ? text : `${text}\n`));
}

/** Writes `pull-secret: <message>` to stderr (one line per message line), through the redactor. */
export function printError(message: string): void {
  const lines = message.split('\n').map((line) => `pull-secret: ${line}`);
  writeSync(2, redactor.redact(`${lines.join('\n')}\n`));
}

/** Reports an error on stderr and returns the exit code it maps to (2 usage/config, 1 runtime). */
export function reportFailure(err: unknown): 1 | 2 {
  const error = toPullSecretError(err);
  printError(error.message);
  return error.exitCode;
}
