import { describe, expect, it } from '@jest/globals';
import { constants } from 'node:fs';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConnectorConfigError,
  createConnector,
  validateConnectorConfig,
} from '../../../operator/agent/connectors/index.js';
import {
  ErlangConfigError,
  createErlangConnector,
  locateErlCall,
} from '../../../operator/agent/connectors/erlang.js';

describe('validateConnectorConfig', () => {
  it('accepts each kind', () => {
    expect(validateConnectorConfig({ kind: 'erlang' })).toEqual({ kind: 'erlang' });
    expect(
      validateConnectorConfig({
        kind: 'erlang',
        nodeName: 'a@1.2.3.4',
        cookieFile: '/etc/cookie',
        timeoutMs: 5000,
      }).kind,
    ).toBe('erlang');
    expect(validateConnectorConfig({ kind: 'exec', program: '/bin/true', args: ['x'] }).kind).toBe('exec');
    expect(validateConnectorConfig({ kind: 'file', path: '/tmp/peers', format: 'json' }).kind).toBe('file');
  });

  it.each([
    [{ kind: 'erlang', cookie: 'secret' }, /unknown key "cookie"/],
    [{ kind: 'erlang', timeoutMs: 10 }, /connector\.timeoutMs must be >= 1000/],
    [{ kind: 'exec' }, /must have required property 'program'/],
    [{ kind: 'exec', program: 'relative/path' }, /connector\.program must match pattern/],
    [
      { kind: 'file', path: '/x', format: 'yaml' },
      /connector\.format must be equal to one of the allowed values/,
    ],
    [{ kind: 'smoke' }, /connector\.kind must be one of erlang, exec, file/],
    [null, /connector\.kind must be one of/],
  ])('refuses %j naming the problem', (value, message) => {
    expect(() => validateConnectorConfig(value)).toThrow(ConnectorConfigError);
    expect(() => validateConnectorConfig(value)).toThrow(message);
  });
});

describe('createConnector', () => {
  it('builds file and exec connectors', async () => {
    const f = await createConnector({ kind: 'file', path: '/tmp/never-written', format: 'lines' });
    expect(f.kind).toBe('file');
    await f.close();
    const e = await createConnector({ kind: 'exec', program: '/bin/true' });
    expect(e.kind).toBe('exec');
  });

  it('refuses an erlang config without a name, with a bad name, or without a cookie', async () => {
    const env = { PATH: process.env.PATH };
    await expect(createErlangConnector({ kind: 'erlang' }, { env })).rejects.toThrow(/RELEASE_NODE/);
    await expect(createErlangConnector({ kind: 'erlang', nodeName: "a'@h" }, { env })).rejects.toThrow(
      ErlangConfigError,
    );
    await expect(createErlangConnector({ kind: 'erlang', nodeName: 'a@h' }, { env })).rejects.toThrow(
      /RELEASE_COOKIE/,
    );
    await expect(
      createErlangConnector(
        { kind: 'erlang', nodeName: 'a@h' },
        { env: { ...env, RELEASE_COOKIE: 'has space' } },
      ),
    ).rejects.toThrow(/printable/);
    await expect(
      createErlangConnector({ kind: 'erlang', nodeName: 'a@h', cookieFile: '/nonexistent/cookie' }, { env }),
    ).rejects.toThrow(/cannot read the cookie file/);
  });

  it('takes the node name and distribution from RELEASE_NODE / RELEASE_DISTRIBUTION, and cleans up on close', async () => {
    const work = await mkdtemp(join(tmpdir(), 'ctopo-cfg-'));
    try {
      const conn = await createErlangConnector(
        { kind: 'erlang', workDir: work, erlCall: '/bin/true' },
        {
          env: {
            PATH: '',
            RELEASE_NODE: 'web-0@10.1.2.3',
            RELEASE_DISTRIBUTION: 'sname',
            RELEASE_COOKIE: 'c',
          },
        },
      );
      expect(conn.nodeName).toBe('web-0@10.1.2.3');
      expect(conn.distribution).toBe('sname');
      await conn.close();
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  it('locates erl_call: configured, on PATH, else under the Erlang roots; refuses a non-executable', async () => {
    expect(await locateErlCall('/bin/true', {})).toBe('/bin/true');
    const work = await mkdtemp(join(tmpdir(), 'ctopo-cfg-'));
    try {
      const plain = join(work, 'plain');
      await writeFile(plain, 'x', { mode: 0o644 });
      await expect(locateErlCall(plain, {})).rejects.toThrow(/not an executable/);
      await expect(locateErlCall(work, {})).rejects.toThrow(/not an executable/);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
    // Not on PATH: found where Erlang installs it (the tests' machines have erlang-base).
    const fallback = await locateErlCall(undefined, { PATH: '' });
    expect(fallback).toMatch(/^\/usr(\/local)?\/lib\/erlang\/.*\/bin\/erl_call$/);
    await access(fallback, constants.X_OK);
  });
});
