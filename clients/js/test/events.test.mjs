// The event stream: replay, `after`, waitFor's rules, iteration, and its end.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { ORIGIN, creationOptions, requestOptions, startServer } from '../test-support/helpers.mjs';

describe('events', () => {
  let server, stop;
  before(async () => ({ server, stop } = await startServer()));
  after(() => stop());

  test('waitFor returns each event once, finds those received before it was called, and times out', async () => {
    const account = await server.createAccount();
    const phone = account.device('phone');
    const events = await account.events();
    const alice = await phone.register(creationOptions({ userName: 'alice' }), ORIGIN);
    const bob = await phone.register(creationOptions({ userName: 'bob' }), ORIGIN);
    // Both may have arrived already; each wait returns the next one not yet returned.
    const first = await events.waitFor('credentialAdded');
    const second = await events.waitFor('credentialAdded');
    assert.deepEqual([first.data.credential.credentialId, second.data.credential.credentialId], [alice.id, bob.id]);
    assert.deepEqual([first.id, second.id], [1, 2]);
    // A predicate picks among them: bob's again? No: it was returned already.
    await assert.rejects(events.waitFor('credentialAdded', (data) => data.credential.userName === 'bob', { timeout: 300 }),
      (error) => error.code === 'ETIMEDOUT' && /credentialAdded, credentialAdded/.test(error.message));
    // A wait that begins before its event comes.
    const waiting = events.waitFor('credentialAsserted', (data) => data.credential.userName === 'bob');
    await phone.sign(requestOptions(), ORIGIN, { user: 'alice' });
    await phone.sign(requestOptions(), ORIGIN, { user: 'bob' });
    const asserted = await waiting;
    assert.equal(asserted.data.credential.credentialId, bob.id);
    assert.equal(asserted.data.credential.signCount, 0);
    // A predicate that throws rejects the wait.
    await assert.rejects(events.waitFor('credentialAsserted', () => {
      throw new Error('boom');
    }), /boom/);
    await events.close();
    await assert.rejects(events.waitFor('credentialAdded', () => false), /closed/);
  });

  test('a later stream replays what was kept; after=ID skips up to ID; iteration ends with the stream', async () => {
    const account = await server.createAccount();
    const phone = account.device('phone');
    const first = await account.events(); // recording starts with the first stream
    const { id } = await phone.register(creationOptions(), ORIGIN);
    await phone.sign(requestOptions(), ORIGIN);
    await first.waitFor('credentialAsserted');

    const replay = await account.events();
    await replay.waitFor('credentialAsserted');
    assert.deepEqual(replay.received.map((e) => [e.id, e.name]), [[1, 'credentialAdded'], [2, 'credentialAsserted']]);

    const later = await account.events({ after: 1 });
    await phone.deletePasskey(id);
    const names = [];
    const iterated = (async () => {
      for await (const event of later) names.push(`${event.id} ${event.name}`);
    })();
    await later.waitFor('credentialDeleted');
    assert.deepEqual(later.received.map((e) => e.id), [2, 3]);

    // Ending the account ends its streams: waits reject, iteration finishes.
    const refused = assert.rejects(first.waitFor('syncArrived'), /ended/);
    await account.delete();
    await refused;
    await iterated;
    assert.deepEqual(names, ['2 credentialAsserted', '3 credentialDeleted']);
    assert.equal(later.ended, true);
    await Promise.all([first.close(), replay.close(), later.close()]);
  });

  test('the server reads the query: ?after=ID skips, ?after=x is refused, ?follow=false ends after the kept events, ?rpId= filters', async () => {
    const account = await server.createAccount();
    const phone = account.device('phone');
    const stream = await account.events();
    await phone.register(creationOptions(), ORIGIN);
    await phone.register(creationOptions({ userName: 'bob', rpId: 'example.org' }), 'https://example.org');
    await stream.waitFor('credentialAdded');
    await stream.waitFor('credentialAdded');
    await stream.close();

    assert.deepEqual((await server.request('GET', `${phone.path}/passkeys?rpId=example.org`)).credentials.map((p) => p.userName), ['bob']);
    assert.deepEqual(await server.request('GET', `${phone.path}/passkeys?rpId=other.example`), { credentials: [] });
    assert.equal((await phone.passkeys({ rpId: 'example.org' })).length, 1);
    await assert.rejects(server.request('GET', `${account.path}/events?after=x`), { status: 400, name: 'badInput' });
    await assert.rejects(server.request('GET', `${account.path}/events?follow=maybe`), { status: 400, name: 'badInput' });

    // Read raw, without this client's own handling of `after`: the server skips event 1.
    const response = await fetch(`${server.url}${account.path}/events?after=1&follow=false`, {
      headers: { authorization: `Bearer ${server.token}` }, signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text(); // follow=false: the body ends
    assert.doesNotMatch(text, /^id: 1$/m);
    assert.match(text, /^id: 2$/m);

    const kept = await account.recordedEvents();
    assert.deepEqual(kept.map((e) => [e.id, e.name]), [[1, 'credentialAdded'], [2, 'credentialAdded']]);
    assert.deepEqual((await account.recordedEvents({ after: 1 })).map((e) => e.id), [2]);
  });

  test('a stream of an account that does not exist is a 404 AuthctlError', async () => {
    await assert.rejects(server.account('nobody').events(), { status: 404, name: 'usage' });
  });
});
