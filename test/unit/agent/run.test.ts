import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentConfig } from '../../../operator/agent/config.js';
import { runAgent, type RunningAgent } from '../../../operator/agent/run.js';
import type { KubeObject } from '../../../operator/kube/client.js';
import { eventsPath, leasesPath, topologiesPath } from '../../../operator/kube/paths.js';
import type { LogLevel } from '../../../operator/observability/logger.js';
import { FakeApiServer } from '../../support/fake-api-server.js';
import { livenessLease } from '../../support/protocol-objects.js';
import { waitFor } from '../../support/wait.js';

/**
 * The agent process (agent/run.ts) with the file connector, against the in-process fake API
 * server: what it connects as the status changes, that it keeps its connections while the Lease
 * is stale and acts once it is live again, its readiness, and the self check's Event. The same
 * guarantees against the real API server and real BEAM nodes are test/e2e/agent/.
 */

const NS = 'shop';
const TOPOLOGIES = topologiesPath(NS);
const LEASES = leasesPath(NS);
const ok = { code: '200', reason: 'OK', since: '2026-12-04T11:00:00Z' };
const peer = (pod: string, host = `10.0.0.${pod.slice(-1)}`) => ({
  nodeName: `${pod}@${host}`,
  pod,
  uid: `uid-${pod}`,
  podIP: host,
  node: '',
  hostSource: 'PodIP',
  nameSource: 'PodName',
  terminating: false,
});
const topology = (peers: ReturnType<typeof peer>[]): KubeObject => ({
  apiVersion: 'cluster.netzlive.io/v1alpha1',
  kind: 'ClusterTopology',
  metadata: { name: 'web', namespace: NS },
  spec: { selector: 'app=web', pollingInterval: '1s' },
  status: { lastResponse: ok, peers, lastPollTime: '2026-12-04T11:00:00Z' },
});
const lease = (agoMs: number, limitS = 120) => livenessLease(NS, 'web', agoMs, limitS);

interface Line {
  level: LogLevel;
  message: string;
  meta?: Record<string, unknown>;
}

describe('the agent process, against the fake API server', () => {
  let api: FakeApiServer;
  let dir: string;
  let agent: RunningAgent | undefined;
  const lines: Line[] = [];
  const peersFile = () => join(dir, 'peers');
  const start = async (more: Partial<AgentConfig> = {}) => {
    const config: AgentConfig = {
      topology: 'web',
      namespace: NS,
      kubeconfig: api.kubeconfig,
      connector: 'file',
      filePath: peersFile(),
      fileFormat: 'lines',
      podName: 'web-0',
      nodeName: 'web-0@10.0.0.0',
      resyncInterval: '0s',
      // member reports have their own tests (test/e2e/agent/member-reports.test.ts)
      report: false,
      callTimeout: '5s',
      httpHost: '127.0.0.1',
      httpPort: 0,
      logLevel: 'debug',
      ...more,
    };
    agent = await runAgent(config, (level, message, meta) =>
      lines.push({ level, message, ...(meta ? { meta } : {}) }),
    );
    return agent;
  };
  const file = async () => (await readFile(peersFile(), 'utf8').catch(() => '')).split('\n').filter(Boolean);
  const get = async (path: string) => {
    const r = await fetch(`http://127.0.0.1:${agent!.port}${path}`);
    return { code: r.status, text: await r.text() };
  };
  const metric = async (line: string) => (await get('/metrics')).text.split('\n').includes(line);

  beforeEach(async () => {
    api = await FakeApiServer.start();
    dir = await mkdtemp(join(tmpdir(), 'ctopo-agent-run-'));
    lines.length = 0;
  });
  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
    await api.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('connects every listed peer but itself, and follows the list as it changes', async () => {
    api.put(LEASES, lease(1000));
    api.put(TOPOLOGIES, topology([peer('web-0'), peer('web-1'), peer('web-2')]));
    await start();
    await waitFor('the first round', async () => (await file()).join() === 'web-1@10.0.0.1,web-2@10.0.0.2');
    api.put(TOPOLOGIES, topology([peer('web-0'), peer('web-2'), peer('web-3')]));
    await waitFor('the next round', async () => (await file()).join() === 'web-2@10.0.0.2,web-3@10.0.0.3');
    await waitFor('the operator live', () => metric('ctopo_agent_operator_liveness{state="live"} 1'));
  });

  it('keeps what it has while the Lease is stale, and acts on the list once the operator is live again', async () => {
    api.put(LEASES, lease(1000));
    api.put(TOPOLOGIES, topology([peer('web-0'), peer('web-1'), peer('web-2')]));
    await start();
    await waitFor('the first round', async () => (await file()).length === 2);
    api.put(LEASES, lease(200_000)); // the operator stopped renewing
    await waitFor('stale', () => metric('ctopo_agent_trouble{cause="StatusStale"} 1'));
    api.put(TOPOLOGIES, topology([peer('web-0'), peer('web-1')]));
    await waitFor('the stale status read', () => lines.some((l) => l.message === 'operator liveness stale'));
    const mark = lines.length;
    api.put(LEASES, lease(0));
    const disconnectedWeb2 = (l: Line) =>
      l.message === 'round' && (l.meta?.disconnected as string[] | undefined)?.includes('web-2@10.0.0.2');
    await waitFor('the list acted on', () => lines.some(disconnectedWeb2));
    expect(await file()).toEqual(['web-1@10.0.0.1']);
    const live = lines.findIndex((l, i) => i >= mark && l.message === 'operator liveness live');
    // Nothing was disconnected while the Lease was stale: the round that did came after it was live.
    expect(live).toBeGreaterThanOrEqual(mark);
    expect(lines.findIndex(disconnectedWeb2)).toBeGreaterThan(live);
    expect(await metric('ctopo_agent_trouble{cause="StatusStale"} 0')).toBe(true);
  });

  it('connects nobody while the Lease it started with is stale, and the listed peers once it is live', async () => {
    api.put(LEASES, lease(200_000));
    api.put(TOPOLOGIES, topology([peer('web-0'), peer('web-1')]));
    // The list only once the agent holds the Lease for stale (else liveness would still be unknown,
    // which is acted on).
    let release = () => {};
    const until = new Promise<void>((r) => (release = r));
    api.fault({
      path: new RegExp(`^${TOPOLOGIES}$`),
      watch: false,
      times: 1,
      fault: { kind: 'held', until },
    });
    await start();
    await waitFor('stale', () => metric('ctopo_agent_operator_liveness{state="stale"} 1'));
    release();
    await waitFor('the stale status read', () => metric('ctopo_agent_trouble{cause="StatusStale"} 1'));
    expect(lines.filter((l) => l.message === 'round')).toEqual([]);
    expect(await file()).toEqual([]);
    api.put(LEASES, lease(0));
    await waitFor('the list acted on', async () => (await file()).join() === 'web-1@10.0.0.1');
  });

  it('keeps its connections while the API refuses it, and says so in its metrics', async () => {
    api.put(TOPOLOGIES, topology([peer('web-0'), peer('web-1')]));
    await start();
    await waitFor('the first round', async () => (await file()).length === 1);
    api.fault({
      path: new RegExp(`^${TOPOLOGIES}$`),
      fault: { kind: 'status', code: 403, reason: 'Forbidden' },
    });
    api.endWatches();
    await waitFor('Forbidden', () => metric('ctopo_agent_trouble{cause="Forbidden"} 1'));
    expect(await file()).toEqual(['web-1@10.0.0.1']);
    expect(lines.some((l) => l.message === 'round' && (l.meta?.disconnected as string[]).length > 0)).toBe(
      false,
    );
    api.clearFaults();
    api.put(TOPOLOGIES, topology([peer('web-0'), peer('web-1'), peer('web-2')]));
    await waitFor('the trouble over', () => metric('ctopo_agent_trouble{cause="Forbidden"} 0'));
    await waitFor('the new list', async () => (await file()).length === 2);
  });

  it('is not ready before its first status, nor while its self check fails, which it also posts as an Event', async () => {
    let release = () => {};
    const until = new Promise<void>((r) => (release = r));
    api.fault({
      path: new RegExp(`^${TOPOLOGIES}$`),
      watch: false,
      times: 1,
      fault: { kind: 'held', until },
    });
    api.put(TOPOLOGIES, topology([peer('web-0'), peer('web-1')]));
    await start({ nodeName: 'web-0@elsewhere' });
    const before = await get('/readyz');
    expect(before.code).toBe(503);
    expect(before.text).toContain(`no status of ClusterTopology ${NS}/web seen yet`);
    release();
    await waitFor('the self check', () => agent!.selfCheck()?.ok === false);
    const after = await get('/readyz');
    expect(after.code).toBe(503);
    expect(after.text).toContain(
      'self check: the operator computed the node name web-0@10.0.0.0 for pod web-0, but the local node is web-0@elsewhere',
    );
    await waitFor('the Event', () => api.requestsTo(eventsPath(NS)).some((r) => r.method === 'POST'));
    expect(await metric('ctopo_agent_self_check_ok 0')).toBe(true);
  });
});
