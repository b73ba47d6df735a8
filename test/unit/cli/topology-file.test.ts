import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { parseTopologyFile } from '../../../operator/cli/topology-file.js';
import { fixturePath } from './helpers.js';

const TOPOLOGY = `apiVersion: cluster.netzlive.io/v1alpha1
kind: ClusterTopology
metadata: {name: web, namespace: netzlive}
spec:
  selector: app=web
  naming: {hostnameAnnotation: example.com/host}
`;

describe('parseTopologyFile', () => {
  it('reads a manifest and fills the spec defaults', () => {
    const r = parseTopologyFile(TOPOLOGY);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.name).toBe('web');
    expect(r.spec.naming).toEqual({
      hostnameAnnotation: 'example.com/host',
      nodenameAnnotation: 'netzlive/nodename-naming-jsonpath',
      hostFallback: 'PodIP',
      clusterDomain: 'cluster.local',
    });
    expect(r.spec.membership).toEqual({ peers: 'Running', terminating: 'Keep' });
    expect(r.spec.pollingInterval).toBe('10s');
  });

  it('skips the other objects of a multi-document manifest', () => {
    const r = parseTopologyFile(readFileSync(fixturePath('pods', 'custom-topology.yaml'), 'utf8'));
    expect(r).toMatchObject({ ok: true, name: 'ledger', spec: { selector: 'app=ledger' } });
  });

  it('reads JSON, and a List as kubectl get -o json prints it', () => {
    const obj = {
      apiVersion: 'cluster.netzlive.io/v1alpha1',
      kind: 'ClusterTopology',
      metadata: { name: 'web' },
      spec: { selector: 'a=b' },
      status: { peerCount: 3 },
    };
    expect(parseTopologyFile(JSON.stringify(obj))).toMatchObject({ ok: true, name: 'web' });
    expect(parseTopologyFile(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [obj] }))).toMatchObject(
      {
        ok: true,
      },
    );
  });

  it('lists every problem of a spec the API server would refuse', () => {
    const r = parseTopologyFile(readFileSync(fixturePath('pods', 'bad-topology.yaml'), 'utf8'));
    expect(r).toEqual({
      ok: false,
      problems: [
        'spec.naming: unknown field "hostAnnotation"',
        'spec.onForbidden: must be one of "Retain", "Disconnect"',
      ],
    });
  });

  it('refuses a spec that passes the schema but not the semantic checks', () => {
    const r = parseTopologyFile(
      TOPOLOGY.replace('selector: app=web', 'selector: app=web\n  pollingInterval: 500ms'),
    );
    expect(r).toEqual({ ok: false, problems: ['spec.pollingInterval: must be at least 1s'] });
  });

  it.each([
    ['', 'the file is empty; expected a ClusterTopology'],
    ['kind: Pod\nmetadata: {name: x}\n', 'no ClusterTopology found (found: "Pod")'],
    ['a: [\n', 'not valid YAML or JSON'],
    ['just text\n', 'no ClusterTopology found (found: "(no kind)")'],
  ])('refuses %j', (text, problem) => {
    const r = parseTopologyFile(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]).toContain(problem);
  });

  it('refuses two topologies, naming them', () => {
    const two = `${TOPOLOGY}---\n${TOPOLOGY.replace('name: web', 'name: api')}`;
    expect(parseTopologyFile(two)).toEqual({
      ok: false,
      problems: ['2 ClusterTopology objects found ("web", "api"); pass a file with exactly one'],
    });
  });

  it('refuses a missing spec and a foreign apiVersion', () => {
    expect(parseTopologyFile('kind: ClusterTopology\nmetadata: {name: x}\n')).toEqual({
      ok: false,
      problems: ['spec: is required (a map with at least selector)'],
    });
    const r = parseTopologyFile(TOPOLOGY.replace('cluster.netzlive.io/v1alpha1', 'example.com/v1'));
    expect(r).toEqual({
      ok: false,
      problems: ['apiVersion: "example.com/v1" is not of group cluster.netzlive.io'],
    });
  });
});
