import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createErlangConnector,
  type ErlangConnector,
  type ErlangConnectorConfig,
} from '../../../operator/agent/connectors/erlang.js';
import type { SpawnInfo } from '../../../operator/agent/connectors/process.js';
import { runAgentRound } from '../../../operator/agent/round-runner.js';
import { ErlangTestEnv, processAlive, waitFor, type BeamNode } from '../../support/erlang.js';

// Real BEAM nodes on 127.0.0.1 with a private epmd; see test/support/erlang.ts.

let world: ErlangTestEnv;
let a: BeamNode;
let b: BeamNode;
let c: BeamNode;
let work: string;
const spawned: SpawnInfo[] = [];
const connectors: ErlangConnector[] = [];
const worldPids: number[] = [];

function connectorEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    ERL_EPMD_PORT: String(world.epmdPort),
    RELEASE_COOKIE: world.cookie,
  };
}

async function connectorFor(
  node: string,
  extra: Partial<ErlangConnectorConfig> = {},
): Promise<ErlangConnector> {
  const conn = await createErlangConnector(
    { kind: 'erlang', nodeName: node, workDir: work, ...extra },
    { env: connectorEnv(), onSpawn: (i) => spawned.push(i) },
  );
  connectors.push(conn);
  return conn;
}

/** Every process's command line and environment that holds `needle` (other than this test process). */
function processesHolding(needle: string): string[] {
  const hits: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    if (Number(pid) === process.pid) continue;
    for (const what of ['cmdline', 'environ']) {
      try {
        const text = readFileSync(`/proc/${pid}/${what}`).toString('utf8');
        if (text.includes(needle)) hits.push(`${pid} ${what}: ${text.replace(/\0/g, ' ').slice(0, 200)}`);
      } catch {
        // gone, or not ours to read
      }
    }
  }
  return hits;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'ctopo-erl-test-'));
  world = await ErlangTestEnv.start();
  [a, b, c] = await Promise.all([world.startNode('a'), world.startNode('b'), world.startNode('c')]);
  worldPids.push(...world.pids());
}, 60_000);

afterAll(async () => {
  for (const conn of connectors) await conn.close();
  await world?.stop();
  await rm(work, { recursive: true, force: true });
  // Nothing of this world is left running.
  for (const pid of worldPids) expect(processAlive(pid)).toBe(false);
}, 60_000);

describe('erlang connector against real nodes', () => {
  it('finds erl_call and infers long names from a dotted host', async () => {
    const conn = await connectorFor(a.name);
    expect(conn.distribution).toBe('name');
    expect(conn.erlCallPath).toMatch(/erl_call$/);
  });

  it('connects two and three nodes, as the nodes themselves see it, and disconnects', async () => {
    const conn = await connectorFor(a.name);
    const rb = await conn.connect(b.name);
    expect(rb).toMatchObject({ ok: true, action: 'connect', node: b.name });
    await world.waitForNodes(a.name, [b.name]);
    expect(await b.nodes()).toEqual([a.name]);

    const rc = await conn.connect(c.name);
    expect(rc.ok).toBe(true);
    expect(await a.nodes()).toEqual([b.name, c.name]);
    // The connector's own view agrees.
    const listed = await conn.connected();
    expect(listed.ok && [...listed.nodes].sort()).toEqual([b.name, c.name]);

    // Disconnect c; b stays.
    const dc = await conn.disconnect(c.name);
    expect(dc).toMatchObject({ ok: true, action: 'disconnect', node: c.name });
    await waitFor(async () => !(await a.nodes()).includes(c.name), { what: 'a to lose c' });
    expect(await a.nodes()).toContain(b.name);

    // Disconnecting a node that is not connected succeeds, with a note.
    await waitFor(async () => !(await c.nodes()).includes(a.name), { what: 'c to lose a' });
    const again = await conn.disconnect(c.name);
    expect(again).toMatchObject({ ok: true, note: 'was not connected' });

    expect((await conn.disconnect(b.name)).ok).toBe(true);
    await world.waitForNodes(a.name, []);
  }, 60_000);

  it('reports an unreachable node as refused, and connects once it runs', async () => {
    const conn = await connectorFor(a.name);
    const late = world.nodeName('late');
    const r1 = await conn.connect(late);
    expect(r1).toMatchObject({ ok: false, failure: 'Refused', node: late });
    if (!r1.ok) expect(r1.error).toContain('returned false');

    const node = await world.startNode('late');
    const r2 = await conn.connect(late);
    expect(r2.ok).toBe(true);
    await world.waitForNodes(late, [a.name]);
    await conn.disconnect(late);
    await node.stop();
  }, 60_000);

  it('reports a node whose port never speaks as a timeout: connect_node failed only after the whole setup time', async () => {
    // The local node gives each setup step 1 s (net_setuptime); the peer's name is registered in
    // this world's epmd with a loopback port that accepts and never says a word.
    const quick = await world.startNode('quick', { args: ['-kernel', 'net_setuptime', '1'] });
    const silent = await silentNode('silent');
    try {
      const conn = await connectorFor(quick.name);
      const r = await conn.connect(silent.name);
      expect(r).toMatchObject({ ok: false, failure: 'Timeout', node: silent.name });
      if (!r.ok) expect(r.error).toContain('within its setup time of 1000 ms');
      // A refusal from the same node stays a refusal (fast: nobody of that name).
      expect(await conn.connect(world.nodeName('nobody'))).toMatchObject({ ok: false, failure: 'Refused' });
    } finally {
      silent.close();
      await quick.stop();
    }
  }, 60_000);

  it('cannot connect to a node with another cookie', async () => {
    const conn = await connectorFor(a.name);
    const other = await world.startNode('othercookie', { cookie: 'someothercookie' });
    const r = await conn.connect(other.name);
    expect(r).toMatchObject({ ok: false, failure: 'Refused' });
    expect(await a.nodes()).not.toContain(other.name);
    await other.stop();
  }, 60_000);

  it('reads the cookie from the private HOME: with a wrong cookie nothing works', async () => {
    const conn = await createErlangConnector(
      { kind: 'erlang', nodeName: a.name, workDir: work },
      { env: { ...connectorEnv(), RELEASE_COOKIE: 'notthecookie' } },
    );
    connectors.push(conn);
    const r = await conn.connect(b.name);
    expect(r).toMatchObject({ ok: false, failure: 'LocalNodeUnreachable' });
    const self = await conn.selfName();
    expect(self.ok).toBe(false);
  });

  it('takes the cookie from a file as well, and keeps its copy private (0400 in a 0700 dir) until close', async () => {
    const cookieFile = join(work, 'mounted-cookie');
    await writeFile(cookieFile, `${world.cookie}\n`, { mode: 0o644 });
    const before = new Set(readdirSync(work));
    const conn = await createErlangConnector(
      { kind: 'erlang', nodeName: a.name, workDir: work, cookieFile },
      { env: { PATH: process.env.PATH, ERL_EPMD_PORT: String(world.epmdPort) } },
    );
    const made = readdirSync(work).filter((d) => !before.has(d));
    expect(made).toHaveLength(1);
    const dir = join(work, made[0]!);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, '.erlang.cookie')).mode & 0o777).toBe(0o400);
    expect(readFileSync(join(dir, '.erlang.cookie'), 'utf8')).toBe(world.cookie);
    const self = await conn.selfName();
    expect(self).toEqual({ ok: true, name: a.name });
    await conn.close();
    expect(existsSync(dir)).toBe(false);
    await conn.close(); // idempotent
  });

  it('tells the local node its real name, and finds the real name even when the configured one is wrong', async () => {
    const conn = await connectorFor(a.name);
    expect(await conn.selfName()).toEqual({ ok: true, name: a.name });

    // A wrong RELEASE_NODE: a node of that name does not exist.
    const wrong = await connectorFor('a@127.0.0.2');
    // (its host 127.0.0.2 has no epmd: this world's epmd listens on 127.0.0.1 only)
    expect(await wrong.selfName()).toMatchObject({ ok: false, failure: 'LocalNodeUnreachable' });
    const found = await wrong.discoverLocalNodes();
    expect(found.ok).toBe(true);
    if (found.ok) {
      const names = found.nodes.map((n) => n.fullName).filter(Boolean);
      expect(names).toEqual(expect.arrayContaining([a.name, b.name, c.name]));
    }
  }, 30_000);

  it('reports a local node that does not run', async () => {
    const conn = await connectorFor(world.nodeName('nosuchnode'));
    const r = await conn.connect(b.name);
    expect(r).toMatchObject({ ok: false, failure: 'LocalNodeUnreachable' });
    if (!r.ok) expect(r.error).not.toContain(world.cookie);
    const l = await conn.connected();
    expect(l).toMatchObject({ ok: false, failure: 'LocalNodeUnreachable' });
  });

  it('runs concurrent calls without erl_call name clashes', async () => {
    const conn = await connectorFor(a.name, { concurrency: 4 });
    const from = spawned.length;
    const results = await Promise.all(Array.from({ length: 12 }, () => conn.connect(b.name)));
    expect(results.map((r) => r.ok)).toEqual(Array(12).fill(true));
    // Only the connector's fixed hidden names were used: one per slot, four slots, all busy at once.
    const runs = spawned.slice(from);
    expect(runs.length).toBeGreaterThanOrEqual(12);
    const hidden = runs.map((s) => s.args[s.args.indexOf('-h') + 1] ?? '(no -h)');
    const prefixes = new Set(hidden.map((h) => h.replace(/s\d+$/, '')));
    expect(prefixes.size).toBe(1);
    expect([...prefixes][0]).toMatch(/^ctopo\d+i\d+$/);
    expect([...new Set(hidden.map((h) => h.slice([...prefixes][0]!.length)))].sort()).toEqual([
      's0',
      's1',
      's2',
      's3',
    ]);
    await conn.disconnect(b.name);
  }, 30_000);

  it('times out on a frozen local node, kills erl_call, and never shows the cookie on a command line or in an environment', async () => {
    const conn = await connectorFor(a.name, { timeoutMs: 2000 });
    const seen: SpawnInfo[] = [];
    const observed = await createErlangConnector(
      { kind: 'erlang', nodeName: a.name, workDir: work, timeoutMs: 2000 },
      { env: connectorEnv(), onSpawn: (i) => seen.push(i) },
    );
    connectors.push(observed);
    a.suspend();
    try {
      const pending = observed.connect(b.name);
      const pid = await waitFor(() => seen[0]?.pid, { what: 'erl_call to start' });
      // erl_call is running now (stuck on the frozen node): look at it from outside.
      const cmdline = readFileSync(`/proc/${pid}/cmdline`).toString('utf8').split('\0');
      expect(cmdline.join(' ')).toContain('erl_call');
      expect(cmdline.join(' ')).toContain(`'${b.name}'`);
      expect(cmdline.join(' ')).not.toContain(world.cookie);
      expect(readFileSync(`/proc/${pid}/environ`).toString('utf8')).not.toContain(world.cookie);
      expect(processesHolding(world.cookie)).toEqual([]);
      // The node stays frozen until `finally`: only the connector's own timeout can answer.
      const r = await pending;
      expect(r).toMatchObject({ ok: false, failure: 'Timeout' });
      expect(processAlive(pid)).toBe(false);
    } finally {
      a.resume();
    }
    void conn;
  }, 30_000);

  it('refuses hostile names before spawning anything, and no shell ever sees them', async () => {
    const marker = join(work, 'pwned');
    const conn = await connectorFor(a.name);
    const hostile = [
      `x@127.0.0.1; touch ${marker}`,
      `$(touch ${marker})@127.0.0.1`,
      `\`touch ${marker}\`@127.0.0.1`,
      `a@127.0.0.1'] ; os:cmd("touch ${marker}") ; ['`,
      `a'@127.0.0.1`,
      `a"@127.0.0.1`,
      'a@127.0.0.1\ntouch /tmp/x',
      'a@127.0.0.1\\',
      "'a@127.0.0.1'",
      'a@127.0.0.1 b@127.0.0.1',
      'a@',
      '@127.0.0.1',
      '',
      'a@b@c',
      `a@127.0.0.1%'),os:cmd("touch ${marker}"),'`,
    ];
    const before = spawned.length;
    for (const node of hostile) {
      for (const r of [await conn.connect(node), await conn.disconnect(node)]) {
        expect(r).toMatchObject({ ok: false, failure: 'InvalidNodeName', node });
      }
    }
    expect(spawned.length).toBe(before);
    expect(existsSync(marker)).toBe(false);
  });

  it('never passes the cookie in any argv it spawned', () => {
    expect(spawned.length).toBeGreaterThan(10);
    for (const s of spawned) {
      expect(s.args.join('\n')).not.toContain(world.cookie);
      expect(s.args).not.toContain('-c');
    }
  });

  it('drives rounds: connect the list, drop a node the status dropped, retry a failed one', async () => {
    const conn = await connectorFor(a.name);
    const late = world.nodeName('roundlate');
    let round = await runAgentRound(conn, [], [a.name, b.name, c.name, late], a.name);
    expect(round.plan.connect).toEqual([b.name, c.name, late]);
    expect(round.outcome.remembered).toEqual([b.name, c.name]);
    expect(round.outcome.failedConnects).toEqual([late]);
    await world.waitForNodes(a.name, [b.name, c.name]);

    const node = await world.startNode('roundlate');
    round = await runAgentRound(conn, round.outcome.remembered, [a.name, b.name, late], a.name);
    expect(round.plan.disconnect).toEqual([c.name]);
    expect(round.outcome.remembered).toEqual([b.name, late]);
    // Every agent reads the list without c; only a's runs here. b stays connected to c (earlier
    // cases connected them), and when a connects b again global meshes c back to a through b
    // (seen once in a full run). b's agent would drop c as a's did: this stands in for it.
    // disconnect_node answers true when they were connected, false when not.
    const held = (await b.nodes()).includes(c.name);
    const dropped = await world.rpc(b.name, `erlang disconnect_node ['${c.name}']`);
    expect({ code: dropped.code, out: dropped.stdout.trim() }).toEqual({ code: 0, out: String(held) });
    // Erlang's global may drop overlapping connections a moment after a disconnect
    // (prevent_overlapping_partitions); the agent's next round, every pollingInterval, mends
    // that, so the check runs rounds as the agent would.
    await waitFor(
      async () => {
        const ns = await a.nodes();
        if (ns.includes(b.name) && ns.includes(late) && !ns.includes(c.name)) return true;
        round = await runAgentRound(conn, round.outcome.remembered, [a.name, b.name, late], a.name);
        return false;
      },
      { what: 'a connected to b and roundlate, not c', intervalMs: 300 },
    );

    // An empty list from a real status disconnects everyone the agent connected.
    round = await runAgentRound(conn, round.outcome.remembered, [], a.name);
    expect(round.outcome.disconnected).toEqual([b.name, late]);
    expect(round.outcome.remembered).toEqual([]);
    await node.stop();
    // Every agent reads the same empty list; only a's runs here, so global may mesh b back to a
    // through a node still connected to it (seen on a loaded machine). The others' agents would
    // drop those connections; a round over what a still sees stands in for them.
    await waitFor(
      async () => {
        const ns = await a.nodes();
        if (ns.length === 0) return true;
        await runAgentRound(conn, ns, [], a.name);
        return false;
      },
      { what: 'a connected to no one', intervalMs: 300 },
    );
  }, 60_000);

  it('a round that disconnected someone connects every listed node again (global drops overlapping connections)', async () => {
    // Three nodes of their own, meshed by global (connect_all, the default), so that x's disconnect
    // of z overlaps y's connections: global (prevent_overlapping_partitions, OTP 25+) then drops
    // x–y as well, a moment after the disconnect.
    const [x, y, z] = await Promise.all([
      world.startNode('ovx'),
      world.startNode('ovy'),
      world.startNode('ovz'),
    ]);
    try {
      const conn = await connectorFor(x.name);
      let round = await runAgentRound(conn, [], [x.name, y.name, z.name], x.name);
      expect(round.outcome.remembered).toEqual([y.name, z.name]);
      await world.waitForNodes(y.name, [x.name, z.name]);
      // global has finished meeting all three (else its own sync may still be moving connections).
      for (const n of [x, y, z]) expect((await world.rpc(n.name, 'global sync []')).stdout.trim()).toBe('ok');
      expect(await x.nodes()).toEqual([y.name, z.name]);
      // z leaves the list: one round, and no other after it.
      round = await runAgentRound(conn, round.outcome.remembered, [x.name, y.name], x.name);
      expect(round.outcome.disconnected).toEqual([z.name]);
      // The round connected y again, though x held it when the round began: it called the node's
      // connect_node(y), which answered true. (Whether x still holds y a moment later is global's
      // to decide: it may drop x–y again after the round, and the next round mends it.)
      const yConnect = round.results.connect.find((r) => r.node === y.name);
      expect(yConnect).toMatchObject({ ok: true });
      expect(yConnect).not.toHaveProperty('note', 'already connected');
    } finally {
      await Promise.all([x, y, z].map((n) => n.stop()));
    }
  }, 60_000);

  it('a disconnect that fails stays remembered, and the next round disconnects the node', async () => {
    // A pair of its own, without global's transitive connections: only the rounds connect them.
    const x = await world.startNode('dfailx', { args: ['-connect_all', 'false'] });
    const y = await world.startNode('dfaily', { args: ['-connect_all', 'false'] });
    try {
      const conn = await connectorFor(x.name, { timeoutMs: 2000 });
      let round = await runAgentRound(conn, [], [x.name, y.name], x.name);
      expect(round.outcome.remembered).toEqual([y.name]);
      await world.waitForNodes(x.name, [y.name]);
      // y leaves the list while x answers nothing: the disconnect fails (times out).
      x.suspend();
      try {
        round = await runAgentRound(conn, round.outcome.remembered, [x.name], x.name);
      } finally {
        x.resume();
      }
      expect(round.plan.disconnect).toEqual([y.name]);
      expect(round.outcome.failedDisconnects).toEqual([y.name]);
      expect(round.outcome.remembered).toEqual([y.name]);
      expect(await x.nodes()).toEqual([y.name]);
      // The next round tries again, and now it works.
      round = await runAgentRound(conn, round.outcome.remembered, [x.name], x.name);
      expect(round.outcome.disconnected).toEqual([y.name]);
      expect(round.outcome.remembered).toEqual([]);
      await world.waitForNodes(x.name, []);
    } finally {
      await x.stop();
      await y.stop();
    }
  }, 60_000);
});

/**
 * A node name whose port never speaks: a loopback server that accepts and stays silent,
 * registered in this world's epmd under `short` (ALIVE2_REQ, erts' distribution protocol; the
 * registration lasts while its connection stays open).
 */
async function silentNode(short: string): Promise<{ name: string; close: () => void }> {
  const held: Socket[] = [];
  const server = createServer((s) => held.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const epmd = connect(world.epmdPort, '127.0.0.1');
  const name = Buffer.from(short);
  const req = Buffer.alloc(13 + name.length);
  req.writeUInt8(120, 0); // ALIVE2_REQ
  req.writeUInt16BE(port, 1);
  req.writeUInt8(77, 3); // a normal node
  req.writeUInt8(0, 4); // TCP/IPv4
  req.writeUInt16BE(6, 5); // highest version
  req.writeUInt16BE(5, 7); // lowest version
  req.writeUInt16BE(name.length, 9);
  name.copy(req, 11);
  req.writeUInt16BE(0, 11 + name.length); // no extra
  const len = Buffer.alloc(2);
  len.writeUInt16BE(req.length);
  const answer = await new Promise<Buffer>((resolve, reject) => {
    epmd.once('data', resolve);
    epmd.once('error', reject);
    epmd.write(Buffer.concat([len, req]));
  });
  // ALIVE2_X_RESP (118) or ALIVE2_RESP (121), result 0.
  expect([answer[0] === 118 || answer[0] === 121, answer[1]]).toEqual([true, 0]);
  return {
    name: world.nodeName(short),
    close: () => {
      epmd.destroy();
      for (const s of held) s.destroy();
      server.close();
    },
  };
}
