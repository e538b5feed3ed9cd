// @ts-check
const tseslint = require('typescript-eslint');

/**
 * Layers (docs/decisions/0001). Rule options of a later config replace those of an earlier one,
 * so each folder's list repeats the patterns that apply everywhere.
 */
const everywhere = [
  {
    regex: '^@pack/[^/]+/.',
    message:
      'Import a workspace package from its root (@pack/<name>); deep imports bypass its public surface.',
  },
];
const noData = {
  regex: '^\\.{1,2}/(.*/)?data(/|$)',
  message: 'src/http must not import data/: call a use case of src/domain, which owns the types it returns.',
};
const domainOnly = [
  ...everywhere,
  {
    ...noData,
    message:
      'src/domain must not import data/: declare the type or store interface in the domain and let data/ implement it.',
  },
  {
    regex: '^(express|mongoose)(/|$)',
    message:
      'src/domain must not import express or mongoose: it holds rules and use cases, no I/O frameworks.',
  },
  {
    regex: '^@pack/(http-kit|db)(/|$)',
    message:
      'src/domain must not import @pack/http-kit or @pack/db: throw errors from @pack/errors and reach storage through a store interface.',
  },
];

/** src/messaging: consumers and publishers call use cases; storage is reached through the domain. */
const messagingOnly = [
  ...everywhere,
  {
    ...noData,
    message:
      'src/messaging must not import data/: call a use case of src/domain, or take what it needs from service.ts.',
  },
  {
    regex: '^(express|mongoose)(/|$)',
    message:
      'src/messaging must not import express or mongoose: storage belongs in data/, behind the domain.',
  },
  {
    regex: '^@pack/db(/|$)',
    message:
      'src/messaging must not import @pack/db: take a domain interface (or a OncePerEvent) from service.ts, which wires data/.',
  },
];
/** The files at src/ (config, metrics, main, cli): only service.ts, the wiring root, wires data/. */
const srcFilesOnly = [
  ...everywhere,
  {
    ...noData,
    message:
      'Only src/service.ts (the wiring root) imports data/: export what another entry point needs from it.',
  },
  {
    regex: '^(express|mongoose)(/|$)',
    message: 'Only src/service.ts (the wiring root) and data/ reach express or mongoose.',
  },
  {
    regex: '^@pack/db(/|$)',
    message: 'Only src/service.ts (the wiring root) and data/ import @pack/db.',
  },
];

module.exports = tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '.local/**',
      '**/*.js',
      '**/*.cjs',
      'packages/console/dist*/**',
      'packages/console/src/api/schema.d.ts',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: __dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      // Handlers implement Promise-returning interfaces; an async function without await is fine.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    rules: { 'no-restricted-imports': ['error', { patterns: everywhere }] },
  },
  {
    files: ['services/*/src/http/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...everywhere, noData] }] },
  },
  {
    files: ['services/*/src/domain/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: domainOnly }] },
  },
  {
    files: ['services/*/src/messaging/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: messagingOnly }] },
  },
  {
    files: ['services/*/src/*.ts'],
    ignores: ['services/*/src/service.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: srcFilesOnly }] },
  },
  {
    // Libraries every service loads, the gateway-less ones too: no HTTP server framework.
    files: ['packages/settings-client/src/**/*.ts', 'packages/internal-auth/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...everywhere,
            {
              regex: '^(express|@pack/http-kit)(/|$)',
              message:
                'This package must not depend on express or @pack/http-kit: put what it needs in a small package (as @pack/internal-auth).',
            },
          ],
        },
      ],
    },
  },
  {
    // Metric names live in one place per service (src/metrics.ts), which service.ts calls once.
    files: ['services/*/src/**/*.ts'],
    ignores: ['services/*/src/metrics.ts', '**/*.spec.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression[callee.object.name='metrics'][callee.property.name=/^(counter|gauge|histogram)$/]",
          message: "Declare a service's metrics in its src/metrics.ts (one function that service.ts calls).",
        },
      ],
    },
  },
  {
    // Tests read JSON bodies of unknown shape; asserting on them is the point.
    files: ['**/*.test.ts', '**/*.spec.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
