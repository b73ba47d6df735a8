/**
 * Failure-domain analysis throughput, single thread: analyzeFailureDomains over 10,000 members
 * on 4 levels (region, zone, rack within zone, hostname; 3 regions, 9 zones, 10 racks per zone, 1,000
 * hosts, some members unscheduled, some learners, some not ready) — the operator re-runs it on
 * every Pod or Node change, so it must stay far below a polling interval even for large
 * clusters. Goal ≥ 100,000 members/s (0.1 s for 10,000). One warm-up run, then REPETITIONS
 * timed runs; each sample is members per second of one run.
 */
import { pathToFileURL } from 'node:url';
import { formatFigure, type Figure } from './figure.js';
import { analyzeFailureDomains, type Member } from '../operator/failure-domains/index.js';

const MEMBERS = 10_000;
const REPETITIONS = 7;

function member(i: number): Member {
  const region = `region-${i % 3}`;
  const zone = `${region}${'abc'[Math.floor(i / 3) % 3]}`;
  return {
    name: `etcd-${i}`,
    // Every 97th member is unscheduled: unknown placement at every level.
    labels:
      i % 97 === 0
        ? undefined
        : {
            'topology.kubernetes.io/region': region,
            'topology.kubernetes.io/zone': zone,
            'infra.example.com/rack': `rack-${Math.floor(i / 9) % 10}`,
            'kubernetes.io/hostname': `node-${i % 1000}`,
          },
    votes: i % 13 === 0 ? 0 : 1,
    ready: i % 31 !== 0,
  };
}

export default async function run(): Promise<Figure[]> {
  const members = Array.from({ length: MEMBERS }, (_, i) => member(i));
  const settings = {
    levels: [
      { key: 'topology.kubernetes.io/region' },
      { key: 'topology.kubernetes.io/zone' },
      { key: 'infra.example.com/rack', within: 'topology.kubernetes.io/zone' },
      { key: 'kubernetes.io/hostname' },
    ],
  };
  const check = analyzeFailureDomains(members, settings);
  if (check.domains.length === 0) throw new Error('failure domains: the benchmark layout produced no domain');
  const samples: number[] = [];
  for (let r = 0; r < REPETITIONS; r++) {
    const start = process.hrtime.bigint();
    analyzeFailureDomains(members, settings);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    samples.push(MEMBERS / seconds);
  }
  return [
    {
      name: 'failure domains: analyzeFailureDomains',
      unit: 'members/s',
      samples,
      goal: { op: '>=', value: 100_000 },
      note: `${MEMBERS} members, 4 levels, ${check.domains.length} domains, single thread`,
    },
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const figure of await run()) console.log(formatFigure(figure));
}
