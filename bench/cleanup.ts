/**
 * What a benchmark must undo however it ends: operator processes, the control plane, temp
 * directories. Steps register here; they run in reverse order on a normal finish (the module's
 * `finally`), and on SIGINT/SIGTERM before the process exits, so Ctrl-C leaves nothing running.
 */

type Step = { label: string; fn: () => Promise<void> | void };

const steps: Step[] = [];
let installed = false;
let exiting = false;

/** Registers a cleanup step; the returned function runs it now (once) and unregisters it. */
export function onCleanup(label: string, fn: () => Promise<void> | void): () => Promise<void> {
  const step: Step = { label, fn };
  steps.push(step);
  installSignalHandlers();
  let done = false;
  return async () => {
    if (done) return;
    done = true;
    const i = steps.indexOf(step);
    if (i >= 0) steps.splice(i, 1);
    await fn();
  };
}

/** Runs every registered step, newest first; a failing step is reported and the rest still run. */
export async function runCleanups(): Promise<void> {
  while (steps.length) {
    const step = steps.pop()!;
    try {
      await step.fn();
    } catch (e) {
      process.stderr.write(`cleanup "${step.label}" failed: ${(e as Error).message}\n`);
    }
  }
}

function installSignalHandlers(): void {
  if (installed) return;
  installed = true;
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    process.on(signal, () => {
      if (exiting) return; // a second Ctrl-C while cleaning up: keep cleaning up
      exiting = true;
      process.stderr.write(`\n${signal}: cleaning up (${steps.length} steps)…\n`);
      const hardStop = setTimeout(() => process.exit(code), 60_000);
      hardStop.unref();
      void runCleanups().finally(() => process.exit(code));
    });
  }
}
