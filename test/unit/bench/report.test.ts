import { describe, expect, it } from '@jest/globals';
import {
  cell,
  figureTable,
  formatNumber,
  goalText,
  renderReport,
  verdict,
  type ReportInput,
} from '../../../bench/report.js';
import type { Figure } from '../../../bench/figure.js';

const latency: Figure = {
  name: 'convergence p99',
  unit: 'ms',
  samples: [300, 100, 200],
  goal: { op: '<=', value: 1000 },
  note: 'a | b',
};
const ratio: Figure = { name: 'ratio', unit: '×', samples: [400, 450], goal: { op: '>=', value: 500 } };
const plain: Figure = { name: 'size', unit: 'bytes', samples: [1_572_864] };
const empty: Figure = { name: 'nothing', unit: 'ms', samples: [], goal: { op: '<=', value: 1 } };

describe('formatNumber', () => {
  it('uses separators from 100, two decimals from 1, three significant digits below', () => {
    expect(formatNumber(1_572_864)).toBe('1,572,864');
    expect(formatNumber(150.4)).toBe('150');
    expect(formatNumber(99.456)).toBe('99.46');
    expect(formatNumber(0.012345)).toBe('0.0123');
    expect(formatNumber(0)).toBe('0');
    expect(formatNumber(6)).toBe('6');
    expect(formatNumber(NaN)).toBe('—');
    expect(formatNumber(Infinity)).toBe('∞');
  });
});

describe('cells, goals, verdicts', () => {
  it('escapes pipes and newlines', () => {
    expect(cell('a | b\nc')).toBe('a \\| b c');
  });
  it('shows the goal and whether the median meets it', () => {
    expect(goalText(latency)).toBe('≤ 1,000');
    expect(goalText(ratio)).toBe('≥ 500');
    expect(goalText(plain)).toBe('');
    expect(verdict(latency)).toBe('met');
    expect(verdict(ratio)).toBe('**NOT met**');
    expect(verdict(plain)).toBe('');
    expect(verdict(empty)).toBe('no data');
  });
});

describe('figureTable', () => {
  it('has one row per figure with n, min, median, max, goal and verdict', () => {
    const lines = figureTable([latency, plain, empty]).split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[2]).toBe('| convergence p99 | 3 | 100 | 200 | 300 | ms | ≤ 1,000 | met | a \\| b |');
    expect(lines[3]).toBe('| size | 1 | 1,572,864 | 1,572,864 | 1,572,864 | bytes |  |  |  |');
    expect(lines[4]).toBe('| nothing | 0 | — | — | — | ms | ≤ 1 | no data |  |');
  });
});

describe('renderReport', () => {
  const input: ReportInput = {
    date: '2026-12-02T12:00:00.000Z',
    command: 'npm run bench',
    machine: {
      cpuModel: 'AMD EPYC',
      cores: 2,
      memoryBytes: 24 * 1024 ** 3,
      kernel: 'Linux 6.1',
      loadAverage: [1, 2, 3],
    },
    versions: { node: 'v24.21.0', 'kube-apiserver': 'Kubernetes v1.37.2' },
    modules: [
      {
        name: 'Operator',
        seconds: 600.4,
        figures: [latency, ratio],
        sections: [{ title: 'Comparison', markdown: '| a |\n|---|\n' }],
      },
      { name: 'Broken', seconds: 1, figures: [], sections: [], error: 'control plane did not start' },
    ],
    notes: ['shared machine'],
  };
  const md = renderReport(input);

  it('states machine, date, versions and notes', () => {
    expect(md.startsWith('# Benchmarks\n')).toBe(true);
    expect(md).toContain('2026-12-02T12:00:00.000Z');
    expect(md).toContain('| CPU | AMD EPYC |');
    expect(md).toContain('| cores | 2 |');
    expect(md).toContain('| memory | 24.0 GiB |');
    expect(md).toContain('| load average at start (1/5/15 min) | 1.00 / 2.00 / 3.00 |');
    expect(md).toContain('| kube-apiserver | Kubernetes v1.37.2 |');
    expect(md).toContain('- shared machine');
  });

  it('summarizes every goal, then each module with its table and sections', () => {
    expect(md).toContain('| convergence p99 | ≤ 1,000 ms | 200 | met |');
    expect(md).toContain('| ratio | ≥ 500 × | 425 | **NOT met** |');
    expect(md).toContain('## Operator\n\nTook 600 s.');
    expect(md).toContain('### Comparison\n\n| a |\n|---|\n');
    expect(md).toContain('**Failed:** control plane did not start');
    expect(md.indexOf('## Goals')).toBeLessThan(md.indexOf('## Operator'));
  });

  it('has no runs of blank lines and ends with one newline', () => {
    expect(md).not.toMatch(/\n\n\n/);
    expect(md.endsWith('\n')).toBe(true);
    expect(md.endsWith('\n\n')).toBe(false);
  });
});
