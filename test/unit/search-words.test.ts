// The words of a search that PostgreSQL's trigram index may be asked for alone: each must be contained in every
// name the whole search matches, and hold 3 or more ASCII letters or digits so that it has trigrams in any locale.
import { describe, expect, it } from 'vitest';
import { searchWords } from '../../server/db/postgres-search.js';

describe('searchWords', () => {
  it.each([
    { search: 'team 999', want: ['team ', ' 999'] },
    { search: 'omega', want: ['omega'] },
    { search: 'shop-99.example', want: ['shop-', '.example'] },
    { search: 'a b c', want: [] },
    { search: 'alpha team 12', want: ['alpha ', ' team '] },
    // A character outside ASCII next to a word is left out, never split.
    { search: 'café 123', want: ['caf', ' 123'] },
    { search: '😀abc😀', want: ['abc'] },
    { search: '', want: [] },
  ])('$search gives $want', ({ search, want }) => {
    const words = searchWords(search);
    expect(words).toEqual(want);
    for (const word of words) expect(search).toContain(word);
  });
});
