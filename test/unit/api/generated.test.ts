import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import {
  CRD_PATH,
  MEMBER_CRD_PATH,
  TYPES_PATH,
  renderCrd,
  renderMemberCrd,
  renderTypes,
} from '../../../dev/generate/api.js';

describe('generated API files', () => {
  it('crds/ holds exactly what operator/api/schema.ts generates (run `npm run generate`)', async () => {
    expect(await readFile(CRD_PATH, 'utf8')).toBe(renderCrd());
    expect(await readFile(MEMBER_CRD_PATH, 'utf8')).toBe(renderMemberCrd());
  });
  it('types.generated.ts holds exactly what the schema generates (run `npm run generate`)', async () => {
    expect(await readFile(TYPES_PATH, 'utf8')).toBe(renderTypes());
  });
});

describe('the CRD as kubectl reads it (YAML 1.1)', () => {
  it('keeps every enum value a string (Yes/No must not turn into booleans)', async () => {
    const { parse } = await import('yaml');
    const crd = parse(await readFile(CRD_PATH, 'utf8'), { version: '1.1' });
    const enums: unknown[][] = [];
    const walk = (o: unknown): void => {
      if (Array.isArray(o)) o.forEach(walk);
      else if (o && typeof o === 'object')
        for (const [k, v] of Object.entries(o)) {
          if (k === 'enum') enums.push(v as unknown[]);
          walk(v);
        }
    };
    walk(crd);
    expect(enums.length).toBeGreaterThan(5);
    for (const e of enums) for (const v of e) expect(typeof v).toBe('string');
    expect(enums).toContainEqual(['Yes', 'No', 'Maybe']);
  });
});
