import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import type { ControlPlaneState } from '../../../dev/cluster/control-plane.js';
import { mintClient } from '../../../dev/cluster/pki.js';
import { freshNamespace, installCrd, sharedCluster } from '../../support/cluster.js';
import { applyObjects, applyTopology, readerRbac } from '../../support/objects.js';
import { BeamNode, ErlangTestEnv } from '../../support/erlang.js';
import {
  buildClient,
  buildTelemetryStandIn,
  ProbeNode,
  writeListedStatus,
  type ProbeLine,
} from '../../support/beam-client.js';
import { waitFor } from '../../support/wait.js';

/**
 * What clients/cluster_topology/README.md promises about the OTP library's own behaviour, on real BEAM nodes
 * that read a real API server: the last good list kept when a status is refused, rounds that
 * never overlap (only the newest list waits), failed connects logged without flooding, a
 * crashing hook detached, and telemetry events. The statuses are written here as the operator
 * writes them (a protocol-level test: no operator runs, so nothing rewrites them). Each
 * guarantee has a topology and partner nodes of its own, so OTP's `global` never meshes the
 * nodes of two tests together.
 */

const FAST = {
  backoff_min_ms: 100,
  backoff_max_ms: 1000,
  retry_ms: 500,
  reconnect_delay_ms: 100,
  request_timeout_ms: 5000,
  connect_timeout_ms: 3000,
  lease: false,
};
const TOPOLOGIES = ['last-good', 'rounds', 'logs', 'hook', 'telemetry'];

let s: ControlPlaneState;
let erl: ErlangTestEnv;
let ebin: string;
let ns: string;
let creds: { cert: string; key: string };
const full = (short: string) => `${short}@127.0.0.1`;

beforeAll(async () => {
  s = await sharedCluster();
  await installCrd(s);
  [erl, ebin] = await Promise.all([ErlangTestEnv.start(), buildClient()]);
  ns = await freshNamespace(s, 'beam-g');
  const user = `beam-g-${ns}`;
  creds = await mintClient(s.pki, `user-${user}`, user, []);
  await applyObjects(
    s,
    readerRbac({
      namespace: ns,
      name: 'beam',
      topologies: TOPOLOGIES,
      verbs: ['get', 'watch'],
      subject: { kind: 'User', name: user },
    }),
  );
  for (const t of TOPOLOGIES) await applyTopology(s, ns, t, { selector: `test=${t}`, pollingInterval: '1s' });
}, 180_000);
afterAll(async () => {
  await ProbeNode.stopAll();
  await erl?.stop();
});

/** Writes a topology's status as the operator does: a current list of these nodes. */
const writeStatus = (topology: string, shorts: string[], message?: string) =>
  writeListedStatus(s, ns, topology, shorts, message);

/** A node running the library for `topology` (its pod is `short`). */
const client = (
  short: string,
  topology: string,
  opts: Record<string, unknown> = {},
  erlArgs: string[] = [],
) =>
  ProbeNode.start(erl, ebin, short, {
    client: {
      name: topology,
      namespace: ns,
      api_url: s.server,
      ca_file: s.pki.caCert,
      cert_file: creds.cert,
      key_file: creds.key,
      ...FAST,
      ...opts,
    },
    hostname: short,
    erlArgs,
  });

/** A node without the library, for a client to connect to. */
const partner = (short: string) =>
  ProbeNode.start(erl, ebin, short, { client: { name: 'none' }, env: { CT_PROBE_NO_CLIENT: '1' } });

const has = (p: ProbeNode, short: string) => p.lastNodes().includes(full(short));

describe('the OTP library on real nodes', () => {
  it('a status refused (too many peers, too large) keeps the last good list and every connection', async () => {
    const a = await client('lg-a', 'last-good', { max_peers: 10, max_body_bytes: 16_384 });
    const b = await partner('lg-b');
    await writeStatus('last-good', ['lg-a', 'lg-b']);
    await a.waitForNodes([full('lg-b')]);
    const t = Date.now();

    // 11 peers, more than max_peers, none of them lg-b: refused as a whole.
    await writeStatus('last-good', ['lg-a', ...Array.from({ length: 10 }, (_, i) => `lg-x${i}`)]);
    const tooMany = await waitFor(
      'lg-a to refuse a list of 11',
      async () => {
        const tr = (await a.state()).trouble;
        return tr?.cause === 'malformed' && tr.detail.includes('more than the 10 accepted') ? tr : undefined;
      },
      30_000,
    );
    expect(tooMany.detail).toContain('keeping the last good list');

    // A status larger than max_body_bytes (its lastResponse carries 20 kB), without lg-b.
    await writeStatus('last-good', ['lg-a'], 'x'.repeat(20_000));
    await waitFor(
      'lg-a to refuse an answer beyond max_body_bytes',
      async () => {
        const tr = (await a.state()).trouble;
        return tr?.cause === 'malformed' && /too_large/.test(tr.detail);
      },
      30_000,
    );

    // All the while: lg-b stayed listed in the client's state and connected in every sample.
    const st = await a.state();
    expect(st.peers.map((p) => p.node).sort()).toEqual([full('lg-a'), full('lg-b')]);
    await waitFor('three samples since the first refused list', () => a.samplesSince(t).length >= 3);
    const samples = a.samplesSince(t);
    expect(samples.filter((x) => !x.includes(full('lg-b')))).toEqual([]);
    expect(a.nodedownsSince(t)).toEqual([]);

    // A good list again, without lg-b: the client applies it (it was reading all along).
    await writeStatus('last-good', ['lg-a']);
    await waitFor('lg-a to disconnect lg-b', () => !has(a, 'lg-b'), 30_000);
    expect((await a.state()).trouble).toBeNull();
    await Promise.all([a.stop(), b.stop()]);
  }, 180_000);

  it('rounds never overlap; while one runs, only the newest list waits', async () => {
    // A connect to a frozen node waits for net_setuptime (here 15 s): a long round.
    const frozen: BeamNode = await erl.startNode('ro-f');
    const r = await client('ro-r', 'rounds', {}, ['-kernel', 'net_setuptime', '15']);
    const b = await partner('ro-b');
    await writeStatus('rounds', ['ro-r', 'ro-b']);
    await r.waitForNodes([full('ro-b')]);
    await r.ask('trace', 'tracing');
    frozen.suspend();
    const t = Date.now();
    try {
      await writeStatus('rounds', ['ro-r', 'ro-b', 'ro-f']);
      const calls = () => r.lines.filter((l) => l.t === 'dist_call' && l.at >= t);
      await waitFor('the round to call the frozen node', () => calls().some((l) => l.node === full('ro-f')));
      // Three more lists while that round waits; only the last one may be carried out.
      for (const extra of ['ro-n2', 'ro-n3', 'ro-n4'])
        await writeStatus('rounds', ['ro-r', 'ro-b', 'ro-f', extra]);
      await waitFor(
        'the round for the newest list to end',
        () => r.eventsSince(t, 'round').some((e) => (e.called as string[]).includes(full('ro-n4'))),
        90_000,
      );
      const rounds = r.eventsSince(t, 'round');
      const first = rounds[0]!;
      expect(first.called).toEqual([full('ro-f')]);
      // The three lists arrived while the first round ran (else this test proves nothing).
      for (const extra of ['ro-n2', 'ro-n3', 'ro-n4']) {
        const seen = r.eventsSince(t, 'status').find((e) => (e.peers as string[]).includes(full(extra)));
        expect(seen!.at).toBeLessThan(first.finished_at as number);
      }
      // No two rounds overlap.
      expect(rounds.length).toBeGreaterThanOrEqual(2);
      const spans = rounds.map((e) => [e.started_at as number, e.finished_at as number] as const);
      for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
      // The lists in between were never carried out.
      const called = new Set(calls().map((l) => l.node));
      expect(called.has(full('ro-n2')) || called.has(full('ro-n3'))).toBe(false);
    } finally {
      frozen.resume();
      await frozen.stop();
    }
    await Promise.all([r.stop(), b.stop()]);
  }, 180_000);

  it('many failed connects are one warning a round, a few are one each', async () => {
    const l = await client('lo-l', 'logs');
    const gone = Array.from({ length: 8 }, (_, i) => `lo-gone${i}`);
    const t = Date.now();
    // Nodes that do not exist: epmd knows none of them, so each connect fails at once.
    await writeStatus('logs', ['lo-l', ...gone]);
    await waitFor('two rounds to fail', () => l.eventsSince(t, 'round').length >= 2, 30_000);
    const out = () => l.output.split('\n');
    const summaries = out().filter((x) => /could not connect 8 peers/.test(x));
    const single = out().filter((x) => /could not connect lo-gone\d@/.test(x));
    expect(summaries.length).toBeGreaterThanOrEqual(2);
    // Each summary names five of them; state() lists all eight.
    expect(summaries[0]!.match(/lo-gone\d@/g)?.length).toBe(5);
    expect(single).toEqual([]);
    expect(((await l.state()).last_round!.failed_connects as unknown[]).length).toBe(8);

    // Two failures: told one by one.
    const before = out().length;
    await writeStatus('logs', ['lo-l', 'lo-gone0', 'lo-gone1']);
    await waitFor(
      'a warning for lo-gone1',
      () =>
        out()
          .slice(before)
          .some((x) => /could not connect lo-gone1@/.test(x)),
      30_000,
    );
    await writeStatus('logs', ['lo-l']);
    await l.stop();
  }, 120_000);

  it('a hook that crashes is detached with one warning; the client goes on', async () => {
    // The status first, so that the hook's first event is that status.
    await writeStatus('hook', ['hk-h', 'hk-b']);
    const b = await partner('hk-b');
    const h = await client('hk-h', 'hook', { hook: 'crash' });
    await h.waitForNodes([full('hk-b')]);
    expect((await h.state()).hook).toBe('detached');
    // It got one event (and crashed on it), then none: not the self check, not the round.
    expect(h.eventsSince(0).map((e) => e.event)).toEqual(['status']);
    expect(h.output.split('\n').filter((x) => x.includes('the hook crashed'))).toHaveLength(1);
    // The client still applies what it reads.
    await writeStatus('hook', ['hk-h']);
    await waitFor('hk-h to disconnect hk-b', () => !has(h, 'hk-b'), 30_000);
    expect(h.eventsSince(0)).toHaveLength(1);
    await Promise.all([h.stop(), b.stop()]);
  }, 120_000);

  it('telemetry: with a telemetry module in the VM, connects, disconnects and statuses are events', async () => {
    // No telemetry package can be installed here: a stand-in with telemetry's execute/3
    // (test/fixtures/beam-client/telemetry) reports each call; only this node has it.
    const standIn = await buildTelemetryStandIn(ebin, join(erl.root, 'telemetry-ebin'));
    const tm = await client('tm-t', 'telemetry', {}, ['-pa', standIn]);
    const b = await partner('tm-b');
    const t = Date.now();
    await writeStatus('telemetry', ['tm-t', 'tm-b']);
    await tm.waitForNodes([full('tm-b')]);
    await writeStatus('telemetry', ['tm-t']);
    await waitFor('tm-t to disconnect tm-b', () => !has(tm, 'tm-b'), 30_000);
    const events = (name: string) =>
      tm.lines.filter(
        (l: ProbeLine) => l.t === 'telemetry' && l.at >= t && (l.name as string[]).join('.') === name,
      );
    await waitFor('the disconnect event', () => events('cluster_topology.disconnect').length > 0);
    expect((await tm.state()).telemetry).toBe(true);
    const meta = (l: ProbeLine) => l.metadata as Record<string, unknown>;
    const meas = (l: ProbeLine) => l.measurements as Record<string, unknown>;
    const connect = events('cluster_topology.connect').find((l) => meta(l).node === full('tm-b'))!;
    expect(meta(connect)).toMatchObject({ result: 'ok', topology: `${ns}/telemetry` });
    expect(typeof meas(connect).duration).toBe('number');
    const disconnect = events('cluster_topology.disconnect')[0]!;
    expect(meta(disconnect)).toMatchObject({ node: full('tm-b'), result: 'ok' });
    const statuses = events('cluster_topology.status').map(meas);
    expect(statuses[0]).toMatchObject({ listed: 2, invalid: 0 });
    expect(statuses.at(-1)).toMatchObject({ listed: 1, invalid: 0 });
    expect(events('cluster_topology.self_check').map((l) => meta(l).result)).toContain(true);
    expect(events('cluster_topology.round').map(meas)).toContainEqual(
      expect.objectContaining({ disconnected: 1, failed: 0 }),
    );
    await Promise.all([tm.stop(), b.stop()]);
  }, 120_000);
});
