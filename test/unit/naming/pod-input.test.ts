import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { parsePodInput, resolvePeers } from '../../../operator/naming/index.js';
import { pod } from './fixtures.js';

function pods(text: string): object[] {
  const r = parsePodInput(text);
  if (!r.ok) throw new Error(`refused: ${r.problem}`);
  return r.pods;
}

function problem(text: string): string {
  const r = parsePodInput(text);
  if (r.ok) throw new Error('expected a refusal');
  return r.problem;
}

const a = pod({ name: 'web-0', ip: '10.0.0.1' });
const b = pod({ name: 'web-1', ip: '10.0.0.2' });

describe('parsePodInput: accepted', () => {
  it('a single Pod as JSON', () => {
    expect(pods(JSON.stringify(a))).toEqual([a]);
  });

  it('kubectl get pods -o json: a List of pods', () => {
    const list = { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: [a, b] };
    expect(pods(JSON.stringify(list, null, 4))).toEqual([a, b]);
  });

  it('an API PodList, whose items carry no kind', () => {
    const strip = (p: Record<string, unknown>) => {
      const { kind: _kind, apiVersion: _v, ...rest } = p;
      return rest;
    };
    const list = { apiVersion: 'v1', kind: 'PodList', metadata: {}, items: [strip(a), strip(b)] };
    expect(pods(JSON.stringify(list))).toEqual([strip(a), strip(b)]);
  });

  it('an empty list (kubectl prints one when nothing matches)', () => {
    expect(pods('{"apiVersion":"v1","items":[],"kind":"List","metadata":{"resourceVersion":""}}')).toEqual(
      [],
    );
    expect(pods('kind: PodList\nitems: null\n')).toEqual([]);
  });

  it('a bare JSON array of pods', () => {
    expect(pods(JSON.stringify([a, b]))).toEqual([a, b]);
  });

  it('YAML: a Pod, a List, and several documents', () => {
    const yamlPod = [
      'apiVersion: v1',
      'kind: Pod',
      'metadata:',
      '  name: web-0',
      '  annotations:',
      "    netzlive/hostname-naming-jsonpath: \"$.spec.containers[?(@.name >= '0')].env[?(@.name == 'EXTERNAL_DNS')].value\"",
      'spec:',
      '  containers:',
      '    - name: app',
      '      env:',
      '        - name: EXTERNAL_DNS',
      '          value: myname-web.netzlive.svc.cluster.local',
      'status:',
      '  podIP: 10.0.0.1',
      '',
    ].join('\n');
    const [p] = pods(yamlPod);
    expect(resolvePeers([p]).peers[0]!.nodeName).toBe('web-0@myname-web.netzlive.svc.cluster.local');

    const list =
      'apiVersion: v1\nkind: List\nitems:\n  - kind: Pod\n    metadata: {name: a}\n  - kind: Pod\n    metadata: {name: b}\n';
    expect(pods(list).map((x) => (x as { metadata: { name: string } }).metadata.name)).toEqual(['a', 'b']);

    const multi = `${yamlPod}---\n${list}---\n`;
    expect(pods(multi)).toHaveLength(3);
  });

  it('ignores a byte-order mark', () => {
    expect(pods(`\uFEFF${JSON.stringify(a)}`)).toEqual([a]);
  });

  it('keeps a YAML key named __proto__ as data, without touching prototypes', () => {
    const [p] = pods('kind: Pod\nmetadata:\n  name: x\n__proto__:\n  polluted: true\n');
    expect(Object.getPrototypeOf(p)).toBe(Object.prototype);
    expect((p as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

describe('parsePodInput: refused, with a clear message', () => {
  it.each([
    ['', 'the input is empty; pass the output of kubectl get pods -o json (or -o yaml), or a single Pod'],
    ['  \n\t\n', 'the input is empty'],
    ['# only a comment\n', 'the input holds no document'],
    ['---\n---\n', 'the input holds no document'],
    ['{"kind": "Pod",', 'the input is neither valid JSON nor valid YAML (JSON:'],
    ['[1, 2', 'the input is neither valid JSON nor valid YAML (JSON:'],
    ['a: [1\n', 'the input is neither valid JSON nor valid YAML (YAML:'],
    ['a: 1\na: 2\n', 'the input is neither valid JSON nor valid YAML (YAML: Map keys must be unique'],
    ['hello world', 'the input is a string ("hello world"), not a Pod or a list of pods'],
    ['42', 'the input is a number, not a Pod or a list of pods'],
    ['null', 'the input is null, not a Pod or a list of pods'],
    ['{"metadata": {"name": "x"}}', 'the input has no kind; expected kind Pod, List or PodList'],
    [
      '{"kind": "Service", "metadata": {"name": "x"}}',
      'the input has kind "Service", not Pod, List or PodList',
    ],
    ['{"kind": 7}', 'the input has kind 7, not Pod, List or PodList'],
    ['{"kind": "List", "items": {}}', "the List's items is an object, not an array"],
  ])('%j', (text, expected) => {
    expect(problem(text)).toContain(expected);
  });

  it('names the index and kind of a non-pod item', () => {
    const list = { kind: 'List', items: [a, { kind: 'Service', metadata: { name: 'web' } }] };
    expect(problem(JSON.stringify(list))).toBe(
      'items[1] has kind "Service", not Pod; only pods can be resolved',
    );
    expect(problem(JSON.stringify([a, 'x']))).toBe('item 1 is a string, not a Pod object');
    expect(problem(JSON.stringify({ kind: 'PodList', items: [a, null] }))).toBe(
      'items[1] is null, not a Pod object',
    );
  });

  it('names the document in a multi-document stream', () => {
    const text = 'kind: Pod\nmetadata: {name: a}\n---\nkind: List\nitems:\n  - kind: ConfigMap\n';
    expect(problem(text)).toBe(
      'document 2, items[0] has kind "ConfigMap", not Pod; only pods can be resolved',
    );
    expect(problem('kind: Pod\n---\nkind: Secret\n')).toContain('document 2 has kind "Secret"');
  });

  it('refuses YAML alias bombs', () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let k = 0; k < 8; k++)
      lines.push(
        `${String.fromCharCode(98 + k)}: &${String.fromCharCode(98 + k)} [${Array(9)
          .fill(`*${String.fromCharCode(97 + k)}`)
          .join(',')}]`,
      );
    expect(problem(lines.join('\n'))).toContain('the YAML could not be read');
  });

  it('never throws, whatever the text (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (text) => {
        const r = parsePodInput(text);
        expect(typeof r.ok).toBe('boolean');
        if (!r.ok) expect(r.problem.length).toBeGreaterThan(0);
      }),
      { numRuns: 2000 },
    );
  });
});
