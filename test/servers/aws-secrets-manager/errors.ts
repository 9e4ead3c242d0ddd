/** An AWS JSON 1.1 error answer: its `__type` (without namespace), `message` and HTTP status. */
export class AwsError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** Shorthands for the Secrets Manager errors the server answers with. */
export const notFound = (message = "Secrets Manager can't find the specified secret.") =>
  new AwsError('ResourceNotFoundException', message);
export const invalidParameter = (message: string) => new AwsError('InvalidParameterException', message);
export const invalidRequest = (message: string) => new AwsError('InvalidRequestException', message);
export const validation = (message: string) =>
  new AwsError('ValidationException', `1 validation error detected: ${message}`);
export const MARKED_FOR_DELETION =
  "You can't perform this operation on the secret because it was marked for deletion.";
