import { describe, expect, it } from '@jest/globals';
import type { ClusterTopologyStatus, Peer } from '../../../operator/api/types.generated.js';
import {
  explain,
  quoteShell,
  standingOf,
  type ExplainFacts,
  type TopologyFacts,
} from '../../../operator/cli/explain-report.js';
import { DEFAULT_NAMING_SETTINGS } from '../../../operator/naming/index.js';

const HOST = 'netzlive/hostname-naming-jsonpath';
const DNS_PATH = "$.spec.containers[?(@.name >= '0')].env[?(@.name == 'EXTERNAL_DNS')].value";

const ipPeer: Peer = {
  nodeName: 'redispatch-0@10.1.1.10',
  pod: 'redispatch-0',
  uid: 'u-0',
  podIP: '10.1.1.10',
  node: 'worker-1',
  hostSource: 'PodIP',
  nameSource: 'PodName',
  terminating: false,
};
const dnsPeer: Peer = {
  ...ipPeer,
  nodeName: 'myname-web-0@myname-web.netzlive.svc.cluster.local',
  pod: 'myname-web-0',
  node: '',
  hostSource: 'Annotation',
  terminating: true,
};

const NOW = new Date('2026-01-01T00:05:30Z');

const okStatus: ClusterTopologyStatus = {
  peers: [dnsPeer, ipPeer],
  excluded: [{ pod: 'no-ip', reason: 'NoPodIP', message: 'the pod has no IP yet' }],
  lastResponse: { code: '200', reason: 'OK', since: '2026-01-01T00:00:00Z' },
  lastPollTime: '2026-01-01T00:05:00Z',
  observedGeneration: 1,
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      reason: 'Polled',
      message: 'ok',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    },
  ],
};

function topology(
  status: ClusterTopologyStatus | undefined = okStatus,
  extra: Partial<TopologyFacts> = {},
): TopologyFacts {
  return {
    namespace: 'netzlive',
    name: 'web',
    podNamespace: 'netzlive',
    selector: 'netzlive/pod-type=cluster-service',
    naming: DEFAULT_NAMING_SETTINGS,
    generation: 1,
    ...(status ? { status } : {}),
    ...extra,
  };
}

function facts(pod: string, extra: Partial<ExplainFacts> = {}, t = topology()): ExplainFacts {
  return { topology: t, pod, standing: standingOf(t.status, pod), now: NOW, ...extra };
}

const text = (f: ExplainFacts) => explain(f).lines.join('\n');

describe('standingOf', () => {
  it('finds a peer, an exclusion, or neither', () => {
    expect(standingOf(okStatus, 'redispatch-0')).toEqual({ kind: 'peer', peer: ipPeer });
    expect(standingOf(okStatus, 'no-ip')).toMatchObject({
      kind: 'excluded',
      entries: [{ reason: 'NoPodIP' }],
    });
    expect(standingOf(okStatus, 'other')).toEqual({ kind: 'unlisted' });
    expect(standingOf(undefined, 'other')).toEqual({ kind: 'unlisted' });
  });
});

describe('explain', () => {
  it('a peer with the fallbacks: exit 0, node name, host from status.podIP, name from metadata.name', () => {
    const r = explain(facts('redispatch-0'));
    expect(r.code).toBe(0);
    const out = r.lines.join('\n');
    expect(out).toContain('redispatch-0 is a peer of ClusterTopology netzlive/web.');
    expect(out).toContain('Node name:    redispatch-0@10.1.1.10');
    expect(out).toContain(`Host part:    10.1.1.10 — from status.podIP (the pod has no ${HOST} annotation)`);
    expect(out).toContain(
      'Name part:    redispatch-0 — from metadata.name (the pod has no netzlive/nodename-naming-jsonpath annotation)',
    );
    expect(out).toContain('Runs on:      Node worker-1');
    expect(out).toContain('Terminating:  no');
    expect(out).toContain('exactly redispatch-0@10.1.1.10');
  });

  it('a peer named through an annotation: quotes the expression when the pod was readable', () => {
    const out = text(facts('myname-web-0', { annotations: { [HOST]: DNS_PATH } }));
    expect(out).toContain(
      `Host part:    myname-web.netzlive.svc.cluster.local — from the annotation ${HOST}, JSONPath ${JSON.stringify(DNS_PATH)}`,
    );
    expect(out).toContain('Runs on:      no Node yet (unscheduled)');
    expect(out).toContain('Terminating:  yes — it stays a peer until the pod is gone');
    expect(text(facts('myname-web-0'))).toContain(`from the annotation ${HOST}\n`);
  });

  it("uses the topology's own annotation keys", () => {
    const t = topology(okStatus, {
      naming: { hostnameAnnotation: 'example.com/h', nodenameAnnotation: 'example.com/n' },
    });
    expect(text(facts('redispatch-0', {}, t))).toContain('(the pod has no example.com/h annotation)');
  });

  it('an excluded pod: exit 1 with the reason and message', () => {
    const r = explain(facts('no-ip'));
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([
      'no-ip is not a peer of ClusterTopology netzlive/web: the operator excludes it.',
      '  Reason:   NoPodIP',
      '  Message:  the pod has no IP yet',
    ]);
  });

  it('a pod that does not exist: says so and how to list the selected pods', () => {
    const r = explain(facts('web-9', { lookup: { kind: 'missing' } }));
    expect(r.code).toBe(1);
    const out = r.lines.join('\n');
    expect(out).toContain(
      'web-9 is not a peer of ClusterTopology netzlive/web, and its status does not list it as excluded.',
    );
    expect(out).toContain('Pod netzlive/web-9 does not exist.');
    expect(out).toContain('kubectl get pods -n netzlive -l netzlive/pod-type=cluster-service');
  });

  it('a pod that does not match: the requirements it fails and its labels', () => {
    const t = topology(okStatus, { selector: 'app in (web,api),tier!=cache' });
    const out = text(
      facts(
        'cache-0',
        {
          lookup: {
            kind: 'exists',
            labels: { tier: 'cache', app: 'web' },
            selector: { kind: 'fails', unmet: ['tier!=cache'] },
          },
        },
        t,
      ),
    );
    expect(out).toContain(
      'Pod netzlive/cache-0 exists but does not match the selector "app in (web,api),tier!=cache".',
    );
    expect(out).toContain('Requirements it fails: "tier!=cache"');
    expect(out).toContain('Its labels: app=web, tier=cache');
    expect(out).toContain("kubectl get pods -n netzlive -l 'app in (web,api),tier!=cache'");
  });

  it('a pod that matches but is not listed yet: points at the operator', () => {
    const out = text(
      facts('new-0', { lookup: { kind: 'exists', labels: {}, selector: { kind: 'matches' } } }),
    );
    expect(out).toContain(
      'exists and matches the selector "netzlive/pod-type=cluster-service", but the status does not list it yet',
    );
    expect(out).toContain('The status is from 2026-01-01T00:05:00Z');
    expect(out).toContain('Check that the operator is running');
  });

  it('an invalid selector, an unreadable pod, an unknown match', () => {
    expect(
      text(
        facts('p', {
          lookup: {
            kind: 'exists',
            labels: {},
            selector: { kind: 'invalid', message: 'unable to parse requirement' },
          },
        }),
      ),
    ).toContain("the API server refuses the topology's selector");
    expect(
      text(facts('p', { lookup: { kind: 'unreadable', message: 'cannot read pod: 403 Forbidden' } })),
    ).toContain('Whether pod netzlive/p exists cannot be told: cannot read pod: 403 Forbidden');
    expect(
      text(
        facts('p', {
          lookup: {
            kind: 'exists',
            labels: { a: 'b' },
            selector: { kind: 'unknown', message: 'cannot list' },
          },
        }),
      ),
    ).toContain('Pod netzlive/p exists (labels: a=b); whether it matches the selector');
  });

  it('a topology without status: no operator has processed it', () => {
    const { status: _none, ...bare } = topology();
    const r = explain({ topology: bare, pod: 'web-0', standing: { kind: 'unlisted' } });
    expect(r.code).toBe(1);
    expect(r.lines.join('\n')).toContain('The topology has no status yet: no operator has processed it.');
  });

  it('notes a status that may be out of date', () => {
    const stale: ClusterTopologyStatus = {
      ...okStatus,
      observedGeneration: 1,
      lastResponse: { code: '403', reason: 'Forbidden', since: '2026-01-01T00:01:00Z' },
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'Forbidden',
          message: 'listing pods is forbidden',
          lastTransitionTime: 'x',
        },
      ],
    };
    const out = text(facts('redispatch-0', {}, topology(stale, { generation: 2 })));
    expect(out).toContain('Note: the topology is not Ready (Forbidden): listing pods is forbidden');
    expect(out).toContain('Note: the status is from generation 1 of the spec, which is now at 2');
    // The one staleness rule: the liveness Lease (renewed 00:05:00, limit 120 s), not lastPollTime.
    const lease = {
      kind: 'found' as const,
      lease: { spec: { renewTime: '2026-01-01T00:05:00.000000Z', leaseDurationSeconds: 120 } },
    };
    const abandoned = text(
      facts('redispatch-0', { now: new Date('2026-01-01T03:05:00Z') }, topology(okStatus, { lease })),
    );
    expect(abandoned).toContain(
      'Note: the operator last polled this topology 3 hours ago (its liveness Lease was renewed at 2026-01-01T00:05:00.000000Z, limit 120 s)',
    );
    expect(text(facts('redispatch-0', {}, topology(okStatus, { lease })))).not.toContain('last polled');
    const failedButReady = { ...stale, conditions: [] };
    expect(text(facts('redispatch-0', {}, topology(failedButReady)))).toContain(
      'Note: the last list of pods failed since 2026-01-01T00:01:00Z (403 Forbidden)',
    );
  });

  it('never prints terminal control characters from the cluster', () => {
    const evil = {
      ...okStatus,
      excluded: [{ pod: 'x', reason: 'NoMatch' as const, message: 'a\u001b[31mred\nb' }],
    };
    const out = text(facts('x', {}, topology(evil)));
    expect(out.includes('\u001b')).toBe(false);
    expect(out).toContain('\\u001b[31mred\\u000ab');
  });
});

describe('quoteShell', () => {
  it('leaves plain selectors alone and single-quotes the rest', () => {
    expect(quoteShell('netzlive/pod-type=cluster-service')).toBe('netzlive/pod-type=cluster-service');
    expect(quoteShell('app in (a,b)')).toBe("'app in (a,b)'");
    expect(quoteShell('!legacy')).toBe("'!legacy'");
    expect(quoteShell("it's")).toBe("'it'\\''s'");
  });
});

describe('explain: member state and naming modes', () => {
  const statusWith = (peer: Peer): ClusterTopologyStatus => ({ ...okStatus, peers: [peer] });
  it('shows ready and serving, and says when a status does not carry them', () => {
    const t = topology();
    const withState = text(
      facts('redispatch-0', {}, { ...t, status: statusWith({ ...ipPeer, ready: false, serving: true }) }),
    );
    expect(withState).toContain('Ready:        no — its Ready condition is not True, or it is terminating');
    expect(withState).toContain('Serving:      yes — its Ready condition is True');
    const old = text(facts('redispatch-0'));
    expect(old).toContain('Ready:        unknown (the status was written before the operator published it)');
  });

  it('names the basename and the PodDNS fallback as the origin of the halves', () => {
    const t = topology();
    const peer: Peer = {
      ...ipPeer,
      nodeName: 'app@10-1-1-10.netzlive.pod.corp.example',
      hostSource: 'PodDNS',
      nameSource: 'Basename',
      ready: true,
      serving: true,
    };
    const out = text(
      facts(
        'redispatch-0',
        {},
        {
          ...t,
          naming: {
            ...DEFAULT_NAMING_SETTINGS,
            basename: 'app',
            hostFallback: 'PodDNS',
            clusterDomain: 'corp.example',
          },
          status: statusWith(peer),
        },
      ),
    );
    expect(out).toContain('Name part:    app — from the basename "app" (spec.naming.basename)');
    expect(out).toContain('Host part:    10-1-1-10.netzlive.pod.corp.example — from the pod DNS name');
    expect(out).toContain('.pod.corp.example)');
  });
});
