/**
 * Member report writes (docs/status-protocol.md §8.4) during a rolling update of 100 members and
 * idle: 100 real writers (`MemberReportWriter`, the sidecar's and watchPeers') against a real API
 * server, the requests counted by the API server itself (`apiserver_request_total`,
 * clustertopologymembers, APPLY). Goals (issue #30): ≤ 6 writes per minute per member during the
 * rollout, ≤ 0.2 idle.
 *
 * The rollout replaces one member every 10 s: its pod leaves the list, its successor is listed
 * 2 s later (a new pod: a new uid, a new writer), and every member connects to it 1 s after that —
 * three changes of every member's view per replacement. To finish in minutes, the clock runs
 * TIME_SCALE times faster: the writers' budget (10 s, 5 min, 30 s) and the rollout's times are all
 * divided by it, and the rates are given per real minute. Writes per minute per member = writes
 * ÷ the minutes the writers lived (a replaced member's writer stops, its successor's starts).
 */
import { pathToFileURL } from 'node:url';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { apiserverMetrics, startControlPlane, stopControlPlane } from '../dev/cluster/control-plane.js';
import { installCrd } from '../dev/cluster/crd.js';
import { connect } from '../operator/kube/client.js';
import { NAMESPACES_PATH } from '../operator/kube/paths.js';
import { memberView } from '../operator/protocol/member-report.js';
import { MemberReportWriter } from '../operator/protocol/member-report-writer.js';
import {
  REPORT_MIN_INTERVAL_MS,
  REPORT_RENEW_MS,
  REPORT_RETRY_MS,
  type WriteOutcome,
} from '../operator/protocol/report-plan.js';
import { onCleanup } from './cleanup.js';
import { formatFigure, type Figure } from './figure.js';
import { counterDelta, parsePrometheusText } from './prometheus.js';

const MEMBERS = 100;
const TIME_SCALE = 10;
const REPLACE_EVERY_MS = 10_000;
const LISTED_AFTER_MS = 2_000;
const CONNECTED_AFTER_MS = 1_000;
const NS = 'bench';
const TOPOLOGY = 'web';

const scaled = (ms: number) => ms / TIME_SCALE;
const budget = {
  minIntervalMs: scaled(REPORT_MIN_INTERVAL_MS),
  renewMs: scaled(REPORT_RENEW_MS),
  retryMs: scaled(REPORT_RETRY_MS),
};

interface Member {
  pod: string;
  uid: string;
  nodeName: string;
  writer: MemberReportWriter;
  /** Since when its writes are counted. */
  since: number;
}

export default async function run(): Promise<Figure[]> {
  const dir = await mkdtemp(join(tmpdir(), 'ctopo-bench-reports-'));
  const stop = onCleanup('member reports: control plane', async () => {
    await stopControlPlane(dir);
    await rm(dir, { recursive: true, force: true });
  });
  try {
    const s = await startControlPlane(dir, { log: () => {} });
    await installCrd(s);
    const kube = connect({ kubeconfig: s.kubeconfig });
    await kube.request('POST', NAMESPACES_PATH, {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
    });
    const applies = async () =>
      counterDelta([], parsePrometheusText(await apiserverMetrics(s)), 'apiserver_request_total', 'verb', {
        resource: 'clustertopologymembers',
      }).get('APPLY') ?? 0;

    const outcomes = new Map<WriteOutcome, number>();
    let generation = 0;
    const members = new Map<number, Member>();
    /** Listed node names nobody has connected to yet. */
    const fresh = new Set<string>();
    let lifetimeMs = 0;
    const start = (slot: number): Member => {
      generation++;
      const pod = `web-${slot}`;
      return {
        pod,
        uid: `uid-${slot}-${generation}`,
        nodeName: `web@10.1.${generation >> 8}.${generation & 255}`,
        since: Date.now(),
        writer: new MemberReportWriter({
          kube,
          namespace: NS,
          topology: TOPOLOGY,
          fieldManager: 'bench',
          budget,
          say: (level, message, meta) => {
            if (level === 'warn') console.error(`member reports: ${message} ${JSON.stringify(meta)}`);
          },
          onWrite: (o) => outcomes.set(o, (outcomes.get(o) ?? 0) + 1),
        }),
      };
    };
    const retire = (m: Member) => {
      m.writer.stop();
      lifetimeMs += Date.now() - m.since;
    };
    /** Every member hands its writer its view of the list now (what a reader does on a change). */
    const offerAll = () => {
      const peers = [...members.values()].map((m) => ({ nodeName: m.nodeName, pod: m.pod, uid: m.uid }));
      for (const m of members.values())
        m.writer.offer(
          { name: m.pod, uid: m.uid },
          memberView({
            node: m.nodeName,
            pod: m.pod,
            peers,
            connected: peers.map((p) => p.nodeName).filter((n) => !fresh.has(n)),
          }),
        );
    };

    for (let i = 0; i < MEMBERS; i++) members.set(i, start(i));
    offerAll();
    // Let the first reports settle before counting.
    await sleep(budget.minIntervalMs * 2);
    await Promise.all([...members.values()].map((m) => m.writer.idle()));

    // The rollout.
    const rolloutStarted = Date.now();
    for (const m of members.values()) m.since = rolloutStarted;
    const before = await applies();
    for (let i = 0; i < MEMBERS; i++) {
      const t = Date.now();
      retire(members.get(i)!);
      members.delete(i);
      offerAll();
      await sleep(scaled(LISTED_AFTER_MS));
      const m = start(i);
      members.set(i, m);
      fresh.add(m.nodeName);
      offerAll();
      await sleep(scaled(CONNECTED_AFTER_MS));
      fresh.delete(m.nodeName);
      offerAll();
      await sleep(Math.max(0, scaled(REPLACE_EVERY_MS) - (Date.now() - t)));
    }
    // The last changes' coalesced writes are part of the rollout.
    await sleep(budget.minIntervalMs);
    await Promise.all([...members.values()].map((m) => m.writer.idle()));
    const rolloutWrites = (await applies()) - before;
    const rolloutMs = Date.now() - rolloutStarted;
    for (const m of members.values()) lifetimeMs += Date.now() - m.since;
    const rolloutMemberMinutes = (lifetimeMs * TIME_SCALE) / 60_000;
    const rolloutRate = rolloutWrites / rolloutMemberMinutes;

    // Idle: nothing changes for two renewal periods.
    const idleBefore = await applies();
    const idleMs = budget.renewMs * 2;
    await sleep(idleMs);
    await Promise.all([...members.values()].map((m) => m.writer.idle()));
    const idleWrites = (await applies()) - idleBefore;
    const idleRate = idleWrites / MEMBERS / ((idleMs * TIME_SCALE) / 60_000);
    for (const m of members.values()) m.writer.stop();

    const failed = (outcomes.get('failed') ?? 0) + (outcomes.get('forbidden') ?? 0);
    const note = `${MEMBERS} writers, clock ×${TIME_SCALE}; ${rolloutWrites} APPLY requests in ${((rolloutMs * TIME_SCALE) / 60_000).toFixed(1)} rollout minutes, ${idleWrites} in ${((idleMs * TIME_SCALE) / 60_000).toFixed(0)} idle minutes; ${failed} writes failed`;
    return [
      {
        name: 'member reports: writes per minute per member, rolling update of 100',
        unit: 'writes/min',
        samples: [rolloutRate],
        goal: { op: '<=', value: 6 },
        note,
      },
      {
        name: 'member reports: writes per minute per member, idle',
        unit: 'writes/min',
        samples: [idleRate],
        goal: { op: '<=', value: 0.2 },
      },
    ];
  } finally {
    await stop();
  }
}

export const title = 'Member reports: the writers’ budget on a real API server';

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  for (const f of await run()) console.log(formatFigure(f));
