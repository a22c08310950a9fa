// Starting and stopping `authctl serve`, and connecting to one started elsewhere.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { AuthctlServer } from '../src/index.mjs';
import { ORIGIN, creationOptions, startServer } from '../test-support/helpers.mjs';

describe('the server process', () => {
  let scratch;
  before(() => {
    scratch = mkdtempSync(join(tmpdir(), 'authctl-js-server-'));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  test('start reads the URL and token; stop ends it with exit 0, open streams and all', async () => {
    const { server, stop } = await startServer();
    let events;
    try {
      assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.match(server.token, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(typeof server.pid, 'number');
      assert.deepEqual(await server.health(), { status: 'ok' });
      const openapi = await server.openapi();
      assert.ok(openapi.paths['/accounts'], 'the OpenAPI document lists /accounts');

      const account = await server.createAccount();
      events = await account.events();
      await account.device('phone').register(creationOptions(), ORIGIN);
      await events.waitFor('credentialAdded');
      assert.equal(events.ended, false);
    } finally {
      await stop(); // asserts exit 0
    }
    await events.close();
    assert.equal(events.ended, true);
    await assert.rejects(server.health(), TypeError, 'nothing listens any more');
    assert.deepEqual(await server.stop(), { code: 0 }, 'stopping again answers the same');
  });

  test('with a token file: made when missing, read when there', async () => {
    const tokenFile = join(scratch, 'token');
    const { server, stop } = await startServer({ tokenFile, args: ['--threads', '2'] });
    try {
      assert.equal(server.token, readFileSync(tokenFile, 'utf8').trim());
      assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
      await server.createAccount();
    } finally {
      await stop();
    }
    const again = await startServer({ tokenFile });
    try {
      assert.equal(again.server.token, server.token);
      await again.server.createAccount();
    } finally {
      await again.stop();
    }
  });

  test('connect() reaches a server started elsewhere; its stop() leaves that server running', async () => {
    const { server, stop } = await startServer();
    try {
      const connected = AuthctlServer.connect(`${server.url}/`, server.token);
      assert.equal(connected.url, server.url);
      const account = await connected.createAccount();
      assert.equal((await server.account(account.id).get()).id, account.id);
      assert.deepEqual(await connected.stop(), { code: 0 });
      assert.deepEqual(await server.health(), { status: 'ok' });
    } finally {
      await stop();
    }
    assert.throws(() => AuthctlServer.connect('unix:/tmp/authctl.sock', 'x'), TypeError);
  });

  test('a start that fails rejects with the reason', async () => {
    await assert.rejects(AuthctlServer.start({ bin: join(scratch, 'no-such-authctl') }), /cannot start .*no-such-authctl/);
    await assert.rejects(AuthctlServer.start({ args: ['--threads', '0'] }), (error) => {
      assert.match(error.message, /ended before it listened \(exit code \d+\)/);
      assert.match(error.stderr, /threads/);
      return true;
    });
    await assert.rejects(AuthctlServer.start({ args: ['--socket', join(scratch, 'sock')] }), TypeError);
    assert.equal(existsSync(join(scratch, 'sock')), false);
  });

  test('stop rejects when the server did not exit 0', async () => {
    const server = await AuthctlServer.start({ env: { TMPDIR: scratch } });
    process.kill(server.pid, 'SIGKILL');
    await assert.rejects(server.stop(), (error) => error.signal === 'SIGKILL' && /signal SIGKILL/.test(error.message));
  });
});
