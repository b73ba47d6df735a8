import type { Command } from '../command.js';
import { demoCommand } from './demo.js';
import { devClusterCommand } from './dev-cluster.js';
import { operatorCommand } from './operator.js';

/** Every `ctopo` subcommand, in the order `ctopo --help` lists them. */
export const commands: readonly Command[] = [operatorCommand, demoCommand, devClusterCommand];
