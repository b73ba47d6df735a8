import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  MESH_MIN_INTERVAL_MS,
  meshEvents,
  planMeshWrite,
  publishedMesh,
  type PublishedMesh,
} from '../../../operator/mesh/publish.js';
import type { MeshStatus } from '../../../operator/api/types.generated.js';

const meshOf = (largest: number, failures: { pod: string; actual: string }[] = []): PublishedMesh => {
  const mesh: MeshStatus = {
    members: 3,
    reporting: 3,
    fullyConnected: largest === 3 ? 3 : 0,
    largestGroup: largest,
    summary: `${largest}/3`,
    ...(failures.length
      ? { selfCheckFailures: failures.map((f) => ({ ...f, expected: `${f.pod}@h` })) }
      : {}),
  };
  const status = failures.length || largest < 3 ? 'False' : 'True';
  return { mesh, condition: { status, reason: status === 'True' ? 'Meshed' : 'LinkBroken', message: 'm' } };
};

describe('the operator writes the mesh only when it changed, at most once per 15 s per topology', () => {
  it('no report at all: nothing in the status (no MESH, no Meshed)', () => {
    expect(publishedMesh(undefined, false)).toEqual({});
  });

  it('a simulated rollout: writes 15 s apart at least, and the last aggregate is written within 15 s', () => {
    const changes = fc.array(
      fc.record({ at: fc.integer({ min: 0, max: 600_000 }), largest: fc.integer({ min: 1, max: 3 }) }),
      { maxLength: 60 },
    );
    fc.assert(
      fc.property(changes, (cs) => {
        const queue = [...cs].sort((a, b) => a.at - b.at);
        let written: PublishedMesh = {};
        let current: PublishedMesh = {};
        let lastWrite: number | undefined;
        let timer: number | undefined;
        const writes: { at: number; mesh: PublishedMesh }[] = [];
        for (;;) {
          const now = Math.min(queue[0]?.at ?? Infinity, timer ?? Infinity);
          if (now === Infinity) break;
          if (queue[0]?.at === now) current = meshOf(queue.shift()!.largest);
          if (timer === now) timer = undefined;
          const d = planMeshWrite(written, current, lastWrite, now, false);
          if (d.action === 'publish') {
            writes.push({ at: now, mesh: d.next });
            written = d.next;
            lastWrite = now;
          } else if (d.action === 'hold') {
            expect(d.at).toBeGreaterThan(now);
            timer = Math.min(timer ?? Infinity, d.at);
          }
        }
        for (let i = 1; i < writes.length; i++)
          expect(writes[i]!.at - writes[i - 1]!.at).toBeGreaterThanOrEqual(MESH_MIN_INTERVAL_MS);
        for (let i = 1; i < writes.length; i++) expect(writes[i]!.mesh).not.toEqual(writes[i - 1]!.mesh);
        expect(written).toEqual(current);
        const lastChange = Math.max(0, ...cs.map((c) => c.at));
        if (writes.length) expect(writes.at(-1)!.at).toBeLessThanOrEqual(lastChange + MESH_MIN_INTERVAL_MS);
      }),
    );
  });

  it('a status write that happens anyway carries the current aggregate at once', () => {
    const d = planMeshWrite(meshOf(3), meshOf(2), 1000, 2000, true);
    expect(d).toEqual({ action: 'publish', next: meshOf(2) });
    expect(planMeshWrite(meshOf(3), meshOf(2), 1000, 2000, false)).toEqual({
      action: 'hold',
      at: 1000 + MESH_MIN_INTERVAL_MS,
    });
    expect(planMeshWrite(meshOf(3), meshOf(3), 1000, 2000, true)).toEqual({ action: 'none' });
  });
});

describe('mesh Events', () => {
  it('one Warning per member newly failing its self check, none while it keeps failing', () => {
    const a = meshOf(3, [{ pod: 'web-1', actual: 'x@h' }]);
    expect(meshEvents(meshOf(3), a).filter((e) => e.reason === 'SelfCheckFailed')).toEqual([
      {
        type: 'Warning',
        reason: 'SelfCheckFailed',
        message: 'web-1 runs as x@h but is listed as web-1@h: its peers dial a name nobody answers',
      },
    ]);
    expect(meshEvents(a, a)).toEqual([]);
    const b = meshOf(3, [{ pod: 'web-1', actual: 'y@h' }]);
    expect(meshEvents(a, b).map((e) => e.reason)).toEqual(['SelfCheckFailed']);
  });

  it('when Meshed flips: NotMeshed (Warning), Meshed (Normal); the first Unknown is no news', () => {
    expect(meshEvents(meshOf(3), meshOf(2)).map((e) => [e.type, e.reason])).toEqual([
      ['Warning', 'NotMeshed'],
    ]);
    expect(meshEvents(meshOf(2), meshOf(3)).map((e) => [e.type, e.reason])).toEqual([['Normal', 'Meshed']]);
    const unknown: PublishedMesh = {
      mesh: meshOf(1).mesh!,
      condition: { status: 'Unknown', reason: 'ReportsMissing', message: 'm' },
    };
    expect(meshEvents({}, unknown)).toEqual([]);
    expect(meshEvents(meshOf(3), unknown).map((e) => e.reason)).toEqual(['MeshUnknown']);
  });
});
