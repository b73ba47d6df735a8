import { describe, expect, it } from '@jest/globals';
import { agentOptions, connectorConfigFrom, type AgentConfig } from '../../../operator/agent/config.js';
import { loadConfig } from '../../../operator/config/load.js';
import { UsageError } from '../../../operator/cli/command.js';

const load = (flags: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) =>
  loadConfig<AgentConfig>(agentOptions, flags, env);

describe("the agent's configuration", () => {
  it('builds each connector from the flat keys', () => {
    expect(
      connectorConfigFrom(load({ topology: 'web', connector: 'erlang', 'node-name': 'a@10.0.0.1' }), 5000),
    ).toEqual({ kind: 'erlang', nodeName: 'a@10.0.0.1', cookieEnv: 'RELEASE_COOKIE', timeoutMs: 5000 });
    expect(
      connectorConfigFrom(
        load({ topology: 'web', connector: 'exec', 'exec-program': '/bin/hook', 'exec-args': 'x,y' }),
        5000,
      ),
    ).toEqual({ kind: 'exec', program: '/bin/hook', args: ['x', 'y'], timeoutMs: 5000 });
    expect(
      connectorConfigFrom(
        load({ topology: 'web', connector: 'file', 'file-path': '/tmp/p', 'file-format': 'json' }),
        5000,
      ),
    ).toEqual({ kind: 'file', path: '/tmp/p', format: 'json' });
  });
  it('takes values from the environment', () => {
    const c = load({}, { CTOPO_TOPOLOGY: 'web', CTOPO_CONNECTOR: 'file', CTOPO_FILE_PATH: '/tmp/p' });
    expect(connectorConfigFrom(c, 1000)).toMatchObject({ kind: 'file', path: '/tmp/p' });
  });
  it.each([
    [{ connector: 'file', 'file-path': '/p' }, /--topology NAME is required/],
    [{ topology: 'web' }, /--connector erlang\|exec\|file is required/],
    [
      { topology: 'web', connector: 'file', 'file-path': '/p', 'cookie-file': '/c' },
      /--cookie-file does not apply to --connector file/,
    ],
    [{ topology: 'web', connector: 'exec' }, /program/],
    [{ topology: 'web', connector: 'file', 'file-path': 'relative' }, /path/],
  ])('refuses %j with a message naming the problem', (flags, message) => {
    expect(() => connectorConfigFrom(load(flags), 1000)).toThrow(UsageError);
    expect(() => connectorConfigFrom(load(flags), 1000)).toThrow(message);
  });
  it('refuses an unknown connector and a bad port at load', () => {
    expect(() => load({ connector: 'ssh' })).toThrow(/connector: must be one of "erlang", "exec", "file"/);
    expect(() => load({ 'http-port': '-1' })).toThrow(/httpPort: must be >= 0/);
  });
});
