import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Only operator/kube/ may talk to the Kubernetes client: the rest of the code stays pure.
      'no-restricted-imports': [
        'error',
        { paths: [{ name: '@kubernetes/client-node', message: 'import it only in operator/kube/' }] },
      ],
    },
  },
  { files: ['operator/kube/**/*.ts'], rules: { 'no-restricted-imports': 'off' } },
  { files: ['bin/**/*.js'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
);
