import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { CRD_PATH, TYPES_PATH, renderCrd, renderTypes } from '../../../operator/api/generate.js';

describe('generated API files', () => {
  it('crds/ holds exactly what operator/api/schema.ts generates (run `npm run generate`)', async () => {
    expect(await readFile(CRD_PATH, 'utf8')).toBe(renderCrd());
  });
  it('types.generated.ts holds exactly what the schema generates (run `npm run generate`)', async () => {
    expect(await readFile(TYPES_PATH, 'utf8')).toBe(renderTypes());
  });
});
