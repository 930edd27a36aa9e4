// ESLint: the recommended rules, the type-aware ones that catch promises nobody awaits or checks, unused values, and
// the 150-line cap on a function; Prettier owns the layout (eslint-config-prettier turns off what would fight it)
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', '.tsc-out/', '.bench/', '.log/', 'coverage/', 'node_modules/', 'bench/stubs/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-unused-expressions': ['error', { allowShortCircuit: true, allowTernary: true }],
      'max-lines-per-function': ['error', { max: 150 }],
      // terminal escape sequences and ASCII ranges are control characters on purpose
      'no-control-regex': 'off',
    },
  },
  // a test reads the wire's JSON bodies as they come, untyped
  { files: ['**/*.test.ts', 'test/**', 'bench/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly', module: 'readonly' } },
  },
  // the bench's sections are scripts, not product code
  { files: ['bench/**'], rules: { 'max-lines-per-function': 'off' } },
  prettier,
);
