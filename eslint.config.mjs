// @ts-check
// One lint configuration for the whole repository: typescript-eslint's type-checked rules on every
// TypeScript file (sources, tests, scripts, benchmarks), plain recommended rules on JavaScript, and
// Prettier owning layout (eslint-config-prettier turns off the rules that would fight it), and the
// size limits of docs/ARCHITECTURE.md ("Size limits") on the sources of apps/ and packages/.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', '**/dist/**', '**/generated/**', '.turbo/**', '.testrun/**', 'coverage/**'],
  },
  // examples/playwright is a team's own Playwright project, with its own package.json and tsconfig
  // (typechecked by `pnpm typecheck`), written the way such projects are, not to this repository's rules.
  { ignores: ['examples/playwright/**'] },
  // test/fixtures/repos are teams' repositories as they lay them out (their own imports: vitest,
  // tsconfig aliases), packed by the CLI's tests, not this repository's code.
  { ignores: ['test/fixtures/repos/**'] },
  // A disable comment that no longer silences anything fails, so a stale exception cannot linger.
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.strictTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/no-confusing-void-expression': 'off',
      '@typescript-eslint/no-extraneous-class': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['apps/api/assets/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { ...globals.browser } },
  },
  {
    // Size limits (docs/ARCHITECTURE.md): every line counts, comments and blank lines too. An exception
    // says why in its disable comment (`-- reason`), which test/lint/size.test.ts requires.
    files: ['apps/*/src/**/*.ts', 'packages/*/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'max-lines': ['error', { max: 300, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: false, skipComments: false, IIFEs: true }],
    },
  },
  prettier,
);
