import type { Command } from '../command.js';
import { agentCommand } from './agent.js';
import { analyzeCommand } from './analyze.js';
import { demoCommand } from './demo.js';
import { devClusterCommand } from './dev-cluster.js';
import { explainCommand } from './explain.js';
import { operatorCommand } from './operator.js';
import { resolveCommand } from './resolve.js';

/** Every `ctopo` subcommand, in the order `ctopo --help` lists them. */
export const commands: readonly Command[] = [
  operatorCommand,
  agentCommand,
  resolveCommand,
  analyzeCommand,
  explainCommand,
  demoCommand,
  devClusterCommand,
];
