import { ApiError, type Kube } from '../kube/client.js';
import { memberReportsPath } from '../kube/paths.js';
import type { memberReport } from './member-report.js';
import type { WriteOutcome } from './report-plan.js';

/**
 * Sends a member's report (docs/status-protocol.md §8): one server-side apply, which creates the
 * report or replaces the fields this writer owns, so a write is one request whatever the server
 * holds. The outcome feeds `recordAttempt` (report-plan.ts); a failure is the caller's to say
 * once and never a reason to disconnect.
 */

export type MemberReport = ReturnType<typeof memberReport>;

export interface WriteResult {
  outcome: WriteOutcome;
  /** The API server's answer when it refused (code, reason, message), or the transport's error. */
  error?: unknown;
}

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
    const refused = e instanceof ApiError && (e.code === 401 || e.code === 403);
    return { outcome: refused ? 'forbidden' : 'failed', error: e };
  }
}
