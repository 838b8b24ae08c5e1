// @ts-check
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'data/**',
      'test/artifacts/**',
      'coverage/**',
      'core/catalog/manifest-validator.ts',
      'core/catalog/json-schema-validator.ts',
      'eslint.config.js',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // The SQLite driver is synchronous; its ports are `async` on purpose, so that a driver error
    // rejects the returned promise instead of throwing past the caller's `.catch` (store/types.ts).
    // The reads of every tool call answer with the value itself, through `attempt` (core/awaitable.ts).
    files: ['core/store/sqlite/**'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
);
