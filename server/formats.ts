// A custom string format of the spec: how to check a value, and what to tell a client whose value fails.
export interface FieldFormat {
  validate(value: string): boolean;
  message: string;
}

/**
 * Only text that is valid Unicode can be stored as it was sent: JSON can carry lone UTF-16 surrogates
 * ("\ud800"), which would come back from the database as replacement characters.
 */
export function wellFormed(validate: (value: string) => boolean): (value: string) => boolean {
  return (value) => value.isWellFormed() && validate(value);
}
