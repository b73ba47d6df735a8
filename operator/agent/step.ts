import type { Liveness, Reading } from '../protocol/read.js';
import { agentInputFrom, checkSelf, selfEntry, type SelfCheck } from './observe.js';
import { decideAgentAction, type AgentInput, type TroubleCause } from './round.js';
import { reportTrouble, type TroubleLog } from './trouble-report.js';

/**
 * What the agent does with one `Reading` (docs/agent.md), as a pure step: from what it said and
 * found so far, the reading, its pod, its node's real name and the time, to what it remembers
 * next and the effects — log lines, gauges, the self check's Event, and the input it hands its
 * round loop. `run.ts` is the applier: it reads, asks the node its name, steps, and performs the
 * effects in order.
 *
 * - Trouble and liveness are said as soon as they are read: one line per change and a reminder
 *   (`trouble-report.ts`); the gauges every time.
 * - With a list to act on: the time of the poll that produced it, then the self check — loudly on
 *   every reading while it fails (a wrong name is the first cause of a silent non-cluster), once
 *   when it passes again; out of a pod, once that it is off.
 * - The round loop always gets the input: a list, or the trouble that keeps what it has.
 */

export interface AgentState {
  /** The trouble being reported, and its message ('' without one) for /readyz. */
  trouble?: TroubleLog;
  troubleMessage: string;
  /** The liveness last said. */
  liveness?: Liveness['state'];
  /** A list has been acted on (ready). */
  statusSeen: boolean;
  selfCheckOffSaid: boolean;
  self?: SelfCheck;
}

export const START: AgentState = { troubleMessage: '', statusSeen: false, selfCheckOffSaid: false };

type Level = 'error' | 'warn' | 'info' | 'debug';

export type AgentEffect =
  | { do: 'log'; level: Level; message: string; meta?: Record<string, unknown> }
  | { do: 'gauges'; trouble: TroubleCause | undefined; liveness: Liveness['state'] }
  /** The lastPollTime of the status acted on, in seconds. */
  | { do: 'lastStatus'; seconds: number }
  | { do: 'selfCheck'; ok: boolean }
  /** A Warning Event on the agent's pod. */
  | { do: 'event'; reason: string; message: string }
  | { do: 'submit'; input: AgentInput };

export interface StepContext {
  /** This agent's pod ('' out of a pod: no self check). */
  podName: string;
  /** The local node's real name, if known. */
  realName: string | undefined;
  now: number;
  remindMs?: number;
}

export function agentStep(
  state: AgentState,
  reading: Reading,
  ctx: StepContext,
): { state: AgentState; effects: AgentEffect[] } {
  const effects: AgentEffect[] = [];
  const next: AgentState = { ...state };
  const input = agentInputFrom(reading, ctx.podName || undefined);
  const action = decideAgentAction(input);
  const trouble = action.action === 'keep' ? { cause: action.cause, message: action.message } : undefined;
  const report = reportTrouble(state.trouble, trouble, ctx.now, ctx.remindMs);
  next.trouble = report.log;
  next.troubleMessage = trouble?.message ?? '';
  const live = reading.liveness;
  effects.push({ do: 'gauges', trouble: trouble?.cause as TroubleCause | undefined, liveness: live.state });
  if (report.line) effects.push({ do: 'log', ...report.line });
  if (live.state !== state.liveness) {
    next.liveness = live.state;
    effects.push({
      do: 'log',
      level: live.state === 'live' ? 'info' : 'warn',
      message: `operator liveness ${live.state}`,
      meta:
        live.state === 'unknown'
          ? { why: live.why }
          : { renewTime: live.renewTime, limitSeconds: live.limitS },
    });
  }
  if (reading.act) {
    next.statusSeen = true;
    const status = reading.object?.status;
    if (status?.lastPollTime)
      effects.push({ do: 'lastStatus', seconds: Date.parse(status.lastPollTime) / 1000 });
    if (!ctx.podName) {
      // Out of a pod (a local run) there is no own entry to compare: say so once.
      if (!state.selfCheckOffSaid)
        effects.push({
          do: 'log',
          level: 'warn',
          message:
            "self check off: this agent does not know its pod's name (--pod-name, $POD_NAME or $HOSTNAME)",
        });
      next.selfCheckOffSaid = true;
    } else {
      const check = checkSelf(selfEntry(status, ctx.podName), ctx.realName, ctx.podName);
      effects.push({ do: 'selfCheck', ok: check.ok });
      if (!check.ok) {
        effects.push(
          {
            do: 'log',
            level: 'error',
            message: `self check failed: ${check.message}`,
            meta: { reason: check.reason },
          },
          { do: 'event', reason: `SelfCheck${check.reason}`, message: check.message },
        );
      } else if (!state.self?.ok) effects.push({ do: 'log', level: 'info', message: check.message });
      next.self = check;
    }
  }
  effects.push({ do: 'submit', input });
  return { state: next, effects };
}
