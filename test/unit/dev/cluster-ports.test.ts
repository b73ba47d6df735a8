import { describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:net';
import { freePorts } from '../../../dev/cluster/processes.js';

/**
 * The dev cluster's port picks (etcd's client and peer ports, the API server's): all distinct,
 * a previous run's port kept when it is free, replaced when it is not.
 */

const listen = (port = 0) =>
  new Promise<Server>((ok, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(port, '127.0.0.1', () => ok(srv));
  });
const close = (srv: Server) => new Promise((ok) => srv.close(ok));
const portOf = (srv: Server) => (srv.address() as { port: number }).port;

describe('freePorts', () => {
  it('three fresh picks are three distinct ports, every time', async () => {
    for (let i = 0; i < 200; i++)
      expect(new Set(await freePorts([undefined, undefined, undefined])).size).toBe(3);
  });

  it("keeps a previous run's ports when they are free", async () => {
    const [a, b, c] = await freePorts([undefined, undefined, undefined]);
    expect(await freePorts([a, b, c])).toEqual([a, b, c]);
  });

  it('a state that recorded one port twice gets two distinct ports (the first keeps it)', async () => {
    const [a] = await freePorts([undefined]);
    const ports = await freePorts([a, a, a]);
    expect(ports[0]).toBe(a);
    expect(new Set(ports).size).toBe(3);
  });

  it('a taken port is replaced by one that is free and differs from the others', async () => {
    const taken = await listen();
    try {
      const [free] = await freePorts([undefined]);
      const ports = await freePorts([portOf(taken), free]);
      expect(ports[0]).not.toBe(portOf(taken));
      expect(ports[1]).toBe(free);
      expect(ports[0]).not.toBe(free);
      // Free for real: each can be listened on.
      for (const p of ports) await close(await listen(p));
    } finally {
      await close(taken);
    }
  });
});
