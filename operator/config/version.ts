import { readFileSync } from 'node:fs';

/**
 * The version of this installation, read once from the package's package.json — the one place
 * the version is kept (tools/release/version.mjs writes it everywhere else). The compiled code
 * sits in dist/operator/config/, three levels below the package root, in a clone, in the npm package and
 * in the image alike.
 */
export const PACKAGE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
