/*
 * Checks of what an operator submits (dashboard forms, admin API, CLI), shared by the operations.
 */
import { GatewayError } from '../errors.js';

/** A refused field of an operator's request: the dashboard shows it beside the field, the API as TG_ERR_INVALID_INPUT. */
export class InputError extends GatewayError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super('TG_ERR_INVALID_INPUT', message);
  }
}

/** C0, DEL, C1 controls and the Unicode line separators: never part of a name or identifier. */
export const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * A trimmed single-line string of at most `max` characters (code points, as for user_id and org_id
 * on /mcp/: an org_id of 256 emoji is one there and here); '' when absent and `optional`.
 */
export function line(value: unknown, field: string, label: string, max: number, optional = false): string {
  const text = typeof value === 'string' ? value.trim() : '';
  if (text === '') {
    if (optional) return '';
    throw new InputError(field, `Enter ${label}.`);
  }
  if ((text.length > max && [...text].length > max) || CONTROL.test(text))
    throw new InputError(
      field,
      `${label[0]!.toUpperCase()}${label.slice(1)} must be one line of at most ${max} characters.`,
    );
  return text;
}
