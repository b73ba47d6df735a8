import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

describe('connectors as a registry', () => {
  it('every registered connector brings its options, schema and help; the agent lists exactly them', async () => {
    const { CONNECTORS, connectorConfigSchema } = await import('../../../operator/agent/connectors/index.js');
    expect(agentOptions.connector.enum).toEqual(CONNECTORS.map((d) => d.kind));
    expect(connectorConfigSchema.oneOf.map((b) => (b.properties.kind as { const: string }).const)).toEqual(
      CONNECTORS.map((d) => d.kind),
    );
    for (const d of CONNECTORS) {
      expect(d.help.length).toBeGreaterThan(10);
      for (const k of Object.keys(d.options)) expect(agentOptions).toHaveProperty(k);
    }
  });
  it('a key of another connector is refused, defaults aside', () => {
    expect(() =>
      connectorConfigFrom(load({ topology: 'web', connector: 'erlang', 'exec-list': true }), 1000),
    ).toThrow(/--exec-list does not apply to --connector erlang/);
    expect(
      connectorConfigFrom(
        load({ topology: 'web', connector: 'exec', 'exec-program': '/bin/hook', 'exec-list': true }),
        1000,
      ),
    ).toEqual({ kind: 'exec', program: '/bin/hook', args: [], timeoutMs: 1000, list: true });
  });
  it('refuses an unknown key in the configuration file, and takes the new keys', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctopo-agent-cfg-'));
    try {
      const file = join(dir, 'agent.yaml');
      writeFileSync(file, 'topology: web\nstateFil: /x\n');
      expect(() => load({ config: file })).toThrow(/unknown key "stateFil"/);
      writeFileSync(file, 'topology: web\nstateFile: /x\nresyncInterval: 5m\n');
      expect(load({ config: file })).toMatchObject({ stateFile: '/x', resyncInterval: '5m' });
      writeFileSync(file, 'resyncInterval: soon\n');
      expect(() => load({ config: file })).toThrow(/resyncInterval/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
