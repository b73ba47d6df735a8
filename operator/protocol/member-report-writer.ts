import { ApiError, type Kube } from '../kube/client.js';
import { memberReportsPath } from '../kube/paths.js';
import { memberReport, type MemberIdentity, type MemberView } from './member-report.js';
import {
  planReport,
  recordAttempt,
  REPORT_BUDGET,
  type ReportBudget,
  type ReportHistory,
  type WriteOutcome,
} from './report-plan.js';

/**
 * Sends a member's report (docs/status-protocol.md §8): one server-side apply, which creates the
 * report or replaces the fields this writer owns, so a write is one request whatever the server
 * holds. `MemberReportWriter` keeps the budget (§8.4, `planReport`): a reader hands it every view
 * it has, and it writes only what the budget allows, when it allows. A failure is said once and is
 * never a reason to disconnect: nothing here touches a connection.
 */

export type MemberReport = ReturnType<typeof memberReport>;

export interface WriteResult {
  outcome: WriteOutcome;
  /** The API server's answer when it refused (code, reason, message), or the transport's error. */
  error?: unknown;
}

/**
 * 401 and 403 (no permission) and 404 (the kind is not served here) are refusals: the server
 * changed nothing, and asking again soon will not change its answer.
 */
export async function writeMemberReport(
  kube: Kube,
  report: MemberReport,
  fieldManager: string,
): Promise<WriteResult> {
  try {
    await kube.request('PATCH', memberReportsPath(report.metadata.namespace, report.metadata.name), {
      query: { fieldManager, force: true },
      contentType: 'application/apply-patch+yaml',
      body: report,
      ignoreBody: true,
    });
    return { outcome: 'ok' };
  } catch (e) {
    const refused = e instanceof ApiError && (e.code === 401 || e.code === 403 || e.code === 404);
    return { outcome: refused ? 'forbidden' : 'failed', error: e };
  }
}

export interface MemberReportWriterOptions {
  kube: Kube;
  namespace: string;
  topology: string;
  /** Names the writer in the report's managed fields (e.g. `ctopo-agent`). */
  fieldManager: string;
  /** Said once when writing stops working, and once when it works again. */
  say: (level: 'warn' | 'info', message: string, meta: Record<string, unknown>) => void;
  /** Every write's outcome (metrics, tests). */
  onWrite?: (outcome: WriteOutcome) => void;
  budget?: ReportBudget;
  now?: () => number;
}

/** What a reader knows of itself when it offers a view: its pod (the uid may be unknown yet). */
export interface ReportingPod {
  name: string;
  uid: string | undefined;
}

export class MemberReportWriter {
  private history: ReportHistory = {};
  private latest: { pod: ReportingPod; view: MemberView } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private again = false;
  private failing = false;
  private stopped = false;

  constructor(private readonly opts: MemberReportWriterOptions) {}

  /** The reader's current view; written now, later (coalesced with what follows) or not at all. */
  offer(pod: ReportingPod, view: MemberView): void {
    if (this.stopped) return;
    this.latest = { pod, view };
    this.consider();
  }

  /** Resolves when no write is in flight. */
  async idle(): Promise<void> {
    while (this.writing) await this.writing;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private consider(): void {
    if (this.stopped || !this.latest) return;
    if (this.writing) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    // Without its pod's uid (§8.3) the report could not name its owner: wait for the next offer.
    if (!this.latest.pod.uid) return;
    const plan = planReport(this.history, this.latest.view, this.now(), this.opts.budget ?? REPORT_BUDGET);
    if (plan.action === 'write') {
      this.writing = this.write().finally(() => {
        this.writing = undefined;
        this.again = false;
        this.consider();
      });
      return;
    }
    this.timer = setTimeout(() => this.consider(), Math.max(0, plan.at - this.now()));
    this.timer.unref?.();
  }

  private async write(): Promise<void> {
    const { pod, view } = this.latest!;
    const at = this.now();
    const id: MemberIdentity = {
      namespace: this.opts.namespace,
      topology: this.opts.topology,
      pod: { name: pod.name, uid: pod.uid! },
    };
    const report = memberReport(id, view, new Date(at));
    const { outcome, error } = await writeMemberReport(this.opts.kube, report, this.opts.fieldManager);
    this.history = recordAttempt(this.history, view, at, outcome);
    this.opts.onWrite?.(outcome);
    if (outcome !== 'ok' && !this.failing) {
      this.failing = true;
      this.opts.say('warn', 'cannot write the member report; connections are not affected', {
        report: `${id.namespace}/${report.metadata.name}`,
        outcome,
        error: describe(error),
      });
    } else if (outcome === 'ok' && this.failing) {
      this.failing = false;
      this.opts.say('info', 'member report written again', {
        report: `${id.namespace}/${report.metadata.name}`,
      });
    }
  }
}

function describe(e: unknown): string {
  if (e instanceof ApiError) return `${e.code} ${e.reason}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}
