// A custom string format of the spec: how to check a value, and what to tell a client whose value fails.
export interface FieldFormat {
  validate(value: string): boolean;
  message: string;
}
