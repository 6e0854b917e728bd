// ESLint here checks one thing only: that no regular expression can backtrack super-linearly (ReDoS).
// Biome stays the code-style linter; eslint-plugin-regexp is the maintained analysis of regex complexity.
import tsParser from '@typescript-eslint/parser';
import regexp from 'eslint-plugin-regexp';

export default [
  { ignores: ['**/node_modules/**', '**/dist/**', 'generated/**', '.docs/**'] },
  {
    files: ['server/**/*.ts', 'client/src/**/*.ts'],
    languageOptions: { parser: tsParser, ecmaVersion: 'latest', sourceType: 'module' },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { regexp },
    rules: {
      'regexp/no-super-linear-backtracking': ['error', { report: 'potential' }],
      'regexp/no-super-linear-move': ['error', { report: 'potential', ignoreSticky: false, ignorePartial: false }],
      'regexp/no-misleading-capturing-group': 'error',
    },
  },
];
