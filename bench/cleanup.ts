/**
 * What a benchmark must undo however it ends: operator processes, the control plane, temp
 * directories. Steps register here; they run in reverse order on a normal finish (the module's
 * `finally`), and on SIGINT/SIGTERM before the process exits, so Ctrl-C leaves nothing running.
 */
import { pathToFileURL } from 'node:url';
import { formatFigure, type Figure } from './figure.js';
import type { Section } from './report.js';

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

/**
 * When module `url` is the script node runs (`node dist/bench/NAME.bench.js`): runs it, prints its
 * figures and sections, and cleans up however it ends.
 */
export async function runIfScript(
  url: string,
  runDetailed: () => Promise<{ figures: Figure[]; sections: Section[] }>,
): Promise<void> {
  if (process.argv[1] === undefined || url !== pathToFileURL(process.argv[1]).href) return;
  try {
    const { figures, sections } = await runDetailed();
    for (const figure of figures) console.log(formatFigure(figure));
    for (const s of sections) console.log(`\n## ${s.title}\n\n${s.markdown}`);
  } finally {
    await runCleanups();
  }
}
