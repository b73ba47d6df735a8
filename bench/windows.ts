/**
 * Measured windows on the bench's control plane: what the API server counted (api-cost.ts), the
 * CPU its process and etcd's used, and the pod watches open at the window's end.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { BenchCluster } from './bench-cluster.js';
import { windowCost, type WindowCost } from './api-cost.js';
import { sumWhere } from './prometheus.js';
import { processCpuSeconds } from './proc.js';
import { perMinute } from './stats.js';

export interface Window extends WindowCost {
  cpu: { apiserver: number; etcd: number };
  /** Pod WATCH requests open at the window's end (`apiserver_longrunning_requests`). */
  podWatches: number;
}

export async function serverCpu(c: BenchCluster): Promise<{ apiserver: number; etcd: number }> {
  return {
    apiserver: await processCpuSeconds(c.state.apiserver.pid),
    etcd: await processCpuSeconds(c.state.etcd.pid),
  };
}

/** Back-to-back windows of `seconds` each, from scrape to scrape; `onWindowEnd` after each. */
export async function measureWindows(
  c: BenchCluster,
  seconds: number,
  count: number,
  onWindowEnd?: (ms: number) => void | Promise<void>,
): Promise<Window[]> {
  const out: Window[] = [];
  let cpu = await serverCpu(c);
  let before = await c.metrics();
  let t = performance.now();
  for (let w = 0; w < count; w++) {
    await sleep(Math.max(0, t + seconds * 1000 - performance.now()));
    const after = await c.metrics();
    const now = performance.now();
    const cpuAfter = await serverCpu(c);
    out.push({
      ...windowCost(before, after, now - t),
      cpu: { apiserver: cpuAfter.apiserver - cpu.apiserver, etcd: cpuAfter.etcd - cpu.etcd },
      podWatches: sumWhere(after, 'apiserver_longrunning_requests', { resource: 'pods', verb: 'WATCH' }),
    });
    await onWindowEnd?.(now - t);
    before = after;
    t = now;
    cpu = cpuAfter;
  }
  return out;
}

/** API server + etcd CPU seconds per minute in a window. */
export const serverCpuPerMinute = (w: Window) => perMinute(w.cpu.apiserver + w.cpu.etcd, w.ms);
