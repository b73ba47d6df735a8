import type { Command } from '../command.js';
import { flagsFor, helpFor, loadConfig } from '../../config/load.js';
import { operatorOptions, type OperatorConfig } from '../../manager/config.js';
import { runOperator, type ControllerParts } from '../../manager/run.js';

export const operatorCommand: Command = operatorCommandWith();

/** `ctopo operator`; with `parts`, the controller works as they say (bench/ runs former designs so). */
export function operatorCommandWith(parts?: ControllerParts): Command {
  return {
    name: 'operator',
    help: `Usage: ctopo operator [flags]

Watches ClusterTopology objects and the pods they select (one watch per namespace, checked against
the API server at least every pollingInterval), resolves node names and writes .status when it
changes. With several replicas one leads (Lease);
the others wait. SIGTERM stops it gracefully (watches closed, lease released).

Flags:
${helpFor(operatorOptions)}`,
    options: flagsFor(operatorOptions),
    async run(values, _positionals, io) {
      const config = loadConfig<OperatorConfig>(operatorOptions, values);
      const op = await runOperator(config, undefined, parts);
      io.err(`ctopo operator: health and metrics on ${config.httpHost}:${op.port}`);
      const code = await new Promise<number>((resolve) => {
        const onSignal = (sig: string) => {
          void op.stop().then(() => resolve(sig === 'SIGTERM' || sig === 'SIGINT' ? 0 : 1));
        };
        process.once('SIGTERM', () => onSignal('SIGTERM'));
        process.once('SIGINT', () => onSignal('SIGINT'));
        // Losing the lease ends the process, as controller-runtime does: a fresh start campaigns again cleanly.
        void op.lost.then((why) => {
          io.err(`ctopo operator: lost leadership (${why}); exiting`);
          void op.stop().then(() => resolve(1));
        });
      });
      return code;
    },
  };
}
