import { describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';
import { join } from 'node:path';
import { repoRoot } from './paths.js';

/**
 * The layering rule (eslint.config.js) on sample imports, as if written in the named files:
 * each violation the issue names is caught, and the allowed imports pass.
 */

const eslint = new ESLint({ cwd: repoRoot });

async function restricted(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${source}\nexport {};\n`, { filePath: join(repoRoot, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('the layering rule', () => {
  it.each([
    [
      'operator/controller/plan.ts',
      "import { StatusApplier } from './apply.js';",
      'pure core imports the shell',
    ],
    [
      'operator/naming/resolve.ts',
      "import { connect } from '../kube/client.js';",
      'pure core imports the client',
    ],
    [
      'operator/failure-domains/analysis.ts',
      "import { createLogger } from '../observability/logger.js';",
      'pure core logs',
    ],
    [
      'operator/kube/reflector-machine.ts',
      "import { Reflector } from './reflector.js';",
      'the machine imports its shell',
    ],
    ['operator/controller/status.ts', "import { readFileSync } from 'node:fs';", 'pure core does I/O'],
    [
      'operator/controller/controller.ts',
      "import { KubeConfig } from '@kubernetes/client-node';",
      'client-node outside kube/client.ts',
    ],
    [
      'operator/kube/reflector.ts',
      "import { Watch } from '@kubernetes/client-node/dist/watch.js';",
      'client-node in another kube/ module',
    ],
    ['operator/config/load.ts', "import { UsageError } from '../cli/command.js';", 'config imports the CLI'],
    ['operator/api/validate.ts', "import { main } from '../cli/main.js';", 'api imports the CLI'],
    [
      'operator/agent/run.ts',
      "import { EventRecorder } from '../controller/events.js';",
      'the agent imports the controller',
    ],
  ])('%s: refuses %s (%s)', async (file, source) => {
    expect(await restricted(file, source)).toHaveLength(1);
  });

  it.each([
    ['operator/kube/client.ts', "import { KubeConfig } from '@kubernetes/client-node';"],
    ['operator/controller/plan.ts', "import { computeStatus } from './status.js';"],
    ['operator/controller/controller.ts', "import { planReconcile } from './plan.js';"],
    ['operator/agent/run.ts', "import { EventRecorder } from '../kube/event-recorder.js';"],
    ['operator/cli/commands/analyze.ts', "import { UsageError } from '../command.js';"],
    ['operator/naming/node-name.ts', "import { isIPv4 } from 'node:net';"],
  ])('%s: allows %s', async (file, source) => {
    expect(await restricted(file, source)).toEqual([]);
  });
});
