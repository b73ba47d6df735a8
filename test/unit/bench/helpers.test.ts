import { describe, expect, it } from '@jest/globals';
import { differences } from '../../../bench/json-diff.js';
import { parseCpuModel } from '../../../bench/machine.js';
import { parseNodeFlags, parseProcStatCpu, parseProcStatus } from '../../../bench/proc.js';

describe('parseProcStatus', () => {
  it('reads VmRSS and VmHWM in bytes', () => {
    const text =
      'Name:\tnode\nVmPeak:\t 1000000 kB\nVmHWM:\t  180000 kB\nVmRSS:\t  150000 kB\nThreads:\t11\n';
    expect(parseProcStatus(text)).toEqual({ rssBytes: 150000 * 1024, peakRssBytes: 180000 * 1024 });
  });
  it('throws when a line is missing', () => {
    expect(() => parseProcStatus('VmRSS:\t 1 kB\n')).toThrow(/VmHWM/);
  });
});

describe('parseNodeFlags', () => {
  it('reads the flags between the executable and the script', () => {
    expect(
      parseNodeFlags(
        '/usr/bin/node\0--max-semi-space-size=2\0/app/bin/ctopo.js\0operator\0--namespaces\0a\0',
      ),
    ).toEqual(['--max-semi-space-size=2']);
    expect(parseNodeFlags('/usr/bin/node\0/app/bin/ctopo.js\0operator\0--kubeconfig\0k\0')).toEqual([]);
  });
});

describe('parseCpuModel', () => {
  it('reads x86 and ARM cpuinfo', () => {
    expect(parseCpuModel('processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n')).toBe(
      'AMD EPYC 7B13',
    );
    expect(parseCpuModel('processor\t: 0\nBogoMIPS\t: 108\nModel\t: Raspberry Pi 4 Model B Rev 1.4\n')).toBe(
      'Raspberry Pi 4 Model B Rev 1.4',
    );
    expect(parseCpuModel('processor: 0\n')).toBeUndefined();
  });
});

describe('differences', () => {
  it('lists the paths where two JSON values differ', () => {
    const a = { spec: { enum: ['Yes', 'No', 'Maybe'], type: 'string' }, keep: [1, 2] };
    const b = { spec: { enum: [true, false, 'Maybe'], type: 'string' }, keep: [1, 2] };
    expect(differences(a, b, '')).toEqual(['/spec/enum/0: "Yes" vs true', '/spec/enum/1: "No" vs false']);
  });
  it('reports missing keys, type changes and nulls, and nothing for equal values', () => {
    expect(differences({ a: 1 }, { a: 1, b: null }, '')).toEqual(['/b: undefined vs null']);
    expect(differences({ a: [1] }, { a: { 0: 1 } }, '')).toEqual(['/a: [1] vs {"0":1}']);
    expect(differences(null, {}, '')).toEqual(['/: null vs {}']);
    expect(differences({ x: [1, { y: 'z' }] }, { x: [1, { y: 'z' }] }, '')).toEqual([]);
  });
  it('stops at 20 paths', () => {
    const a = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, i]));
    expect(differences(a, {}, '')).toHaveLength(20);
  });
});

describe('parseProcStatCpu', () => {
  it('adds utime and stime, even when the command name has spaces and parentheses', () => {
    const rest = 'S 1 2 3 0 -1 4194304 124 0 0 0 250 50 0 0 20 0 1 0 322623 3133440 410';
    expect(parseProcStatCpu(`4242 (kube-apiserver) ${rest}`)).toBe(3);
    expect(parseProcStatCpu(`4242 (a (b) c) ${rest}`, 1000)).toBe(0.3);
  });
  it('throws on other text', () => {
    expect(() => parseProcStatCpu('nothing')).toThrow();
    expect(() => parseProcStatCpu('1 (x) S 1')).toThrow(/utime/);
  });
});
