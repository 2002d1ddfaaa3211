/** The closed set of error codes (SPEC §3). Nothing outside this list is ever returned. */
export const ERROR_CODES = [
  'ToolNotFound', 'InvalidArguments', 'VersionMismatch', 'ToolNotAllowed',
  'ApprovalRequired', 'ApprovalDenied', 'PathTraversalBlocked', 'PathDenied',
  'NotFound', 'AlreadyExists', 'FileTooLarge', 'BinaryFile', 'ReadRequired', 'StaleRead',
  'NoMatch', 'AmbiguousMatch', 'PatchFailed', 'Timeout', 'ExitNonZero',
  'NetworkDenied', 'CircuitOpen', 'Cancelled', 'IOError', 'Internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorInfo {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/** An error a tool or a pipeline stage means to return to the model as a value. */
export class ToolError extends Error {
  readonly code: ErrorCode;
  readonly details?: Record<string, unknown>;
  /** Partial data a tool wants in the envelope even though the call failed (e.g. command output on ExitNonZero). */
  readonly data?: unknown;

  constructor(code: ErrorCode, message: string, opts: { details?: Record<string, unknown>; cause?: unknown; data?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'ToolError';
    this.code = code;
    this.details = opts.details;
    this.data = opts.data;
  }

  toInfo(): ErrorInfo {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

export function isToolError(e: unknown): e is ToolError {
  return e instanceof ToolError;
}

/** Maps a Node.js system error (ENOENT, EACCES, …) to a ToolError the model can act on. */
export function fromSystemError(e: unknown, displayPath: string): ToolError {
  if (e instanceof ToolError) return e;
  const err = e as NodeJS.ErrnoException;
  switch (err?.code) {
    case 'ENOENT':
      return new ToolError('NotFound', `${displayPath} does not exist. Check the path with list_dir or glob.`, { cause: e });
    case 'EEXIST':
      return new ToolError('AlreadyExists', `${displayPath} already exists.`, { cause: e });
    case 'ENOTDIR':
      return new ToolError('NotFound', `A parent of ${displayPath} is not a directory.`, { cause: e });
    case 'EISDIR':
      return new ToolError('InvalidArguments', `${displayPath} is a directory; use list_dir for directories.`, { cause: e });
    case 'ELOOP':
      return new ToolError('PathTraversalBlocked', `${displayPath} is a symbolic link; toolgate does not follow links at this point.`, { cause: e });
    case 'EACCES':
    case 'EPERM':
      return new ToolError('IOError', `The operating system refused access to ${displayPath} (${err.code}).`, { cause: e });
    case 'ABORT_ERR':
      return new ToolError('Cancelled', 'The call was cancelled.', { cause: e });
    default:
      return new ToolError('IOError', `I/O error on ${displayPath}: ${err?.code ?? ''} ${err?.message ?? String(e)}`.trim(), { cause: e });
  }
}
