// An update whose merged metadata would hold too many keys: a 422 naming each key that did not fit.
import { TooManyMetadataKeysError } from '../../metadata/pairs.js';
import { tooManyKeysFindings } from '../../metadata/rules.js';
import { validationProblem } from '../problems/problem.js';

export async function withinMetadataLimit<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof TooManyMetadataKeysError) throw validationProblem(tooManyKeysFindings(error.keys));
    throw error;
  }
}
