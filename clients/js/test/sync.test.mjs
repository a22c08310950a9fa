// The virtual clock and sync: a passkey made on the phone reaches the laptop only once the clock
// has passed the upload and download delays, and the event stream says when.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  DEADLINE, ORIGIN, RP_ID, creationOptions, parseAuthenticatorData, requestOptions, startServer, unb64url, verifyAssertion,
  verifyRegistration,
} from '../test-support/helpers.mjs';

const START = Date.parse('2026-01-01T00:00:00Z');

async function twoDevices(server, sync = { upload: '2s', download: '3s' }) {
  const account = await server.createAccount({
    devices: [{ name: 'phone', pin: '1234' }, { name: 'laptop', pin: '9753' }],
    clock: { mode: 'virtual', start: '2026-01-01T00:00:00Z' },
    sync,
  });
  return { account, phone: account.device('phone'), laptop: account.device('laptop') };
}

describe('virtual clock and sync', () => {
  let server, stop;
  before(async () => ({ server, stop } = await startServer()));
  after(() => stop());

  test('the laptop holds the phone\'s passkey once the clock passes the delays; syncArrived says so; then it signs in', async () => {
    const { account, phone, laptop } = await twoDevices(server);
    assert.deepEqual(account.info.clock, { mode: 'virtual', now: START, time: '2026-01-01T00:00:00.000Z' });
    const events = await account.events();

    const creation = creationOptions({ userName: 'alice' });
    const { id, publicKey } = verifyRegistration(await phone.register(creation, ORIGIN), { challenge: creation.challenge });
    const added = await events.waitFor('credentialAdded');
    assert.equal(added.data.authenticatorId, 'phone');
    assert.equal(added.data.credential.credentialId, id);
    assert.equal(added.data.time, START);

    // Not on the laptop yet, however long real time takes: only the virtual clock moves sync.
    assert.deepEqual(await laptop.passkeys({ rpId: RP_ID }), []);
    await assert.rejects(laptop.sign(requestOptions(), ORIGIN), { name: 'notHandled', domException: 'NotAllowedError' });
    const status = await account.syncStatus();
    const phoneStatus = status.devices.find((d) => d.name === 'phone');
    assert.equal(phoneStatus.pendingUploads.length, 1);
    assert.equal(status.now, START);

    // 1 s: the upload (2 s) has not landed.
    assert.equal((await account.advanceClock('1s')).now, START + 1000);
    assert.deepEqual(await laptop.passkeys(), []);
    // 2 s: it lands in the store; the download (3 s) starts.
    assert.equal((await account.advanceClock(1000)).now, START + 2000);
    const landed = await events.waitFor('syncLanded', (data) => data.credentialId === id);
    assert.deepEqual(landed.data, { device: 'phone', credentialId: id, removal: false, time: START + 2000 });
    assert.deepEqual(await laptop.passkeys(), []);
    // 4.999 s: not yet.
    await account.advanceClock('2s999ms');
    assert.deepEqual(await laptop.passkeys(), []);
    assert.equal(events.received.some((e) => e.name === 'syncArrived'), false);
    // 5 s: it arrives.
    assert.equal((await account.advanceClock('1ms')).time, '2026-01-01T00:00:05.000Z');
    const arrived = await events.waitFor('syncArrived', (data) => data.device === 'laptop' && data.credentialId === id, { timeout: DEADLINE });
    assert.deepEqual(arrived.data, { device: 'laptop', credentialId: id, removal: false, time: START + 5000 });
    assert.ok(arrived.id > landed.id);

    const held = await laptop.passkeys({ rpId: RP_ID });
    assert.deepEqual(held.map((p) => p.id), [id]);
    assert.equal(held[0].backupState, true, 'uploaded: BS is 1');

    // The laptop signs in with it, verifying the user with its own PIN; the phone's key verifies it.
    const request = requestOptions({ uv: 'required' });
    const assertion = await laptop.sign(request, ORIGIN);
    assert.equal(assertion.id, id);
    const parsed = verifyAssertion(assertion, { challenge: request.challenge, publicKey, requireUV: true });
    assert.deepEqual([parsed.flags.BE, parsed.flags.BS], [true, true]);
    const asserted = await events.waitFor('credentialAsserted');
    assert.equal(asserted.data.authenticatorId, 'laptop');
    assert.equal(asserted.data.time, START + 5000);
    await events.close();
  });

  test('an offline device waits; a deletion syncs as a removal', async () => {
    const { account, phone, laptop } = await twoDevices(server, { upload: '1s', download: '1s' });
    const events = await account.events();
    assert.equal((await laptop.offline()).online, false);
    const { id } = await phone.register(creationOptions(), ORIGIN);
    await account.advanceClock('10s');
    await events.waitFor('syncLanded');
    assert.deepEqual(await laptop.passkeys(), [], 'offline: nothing arrives');

    assert.equal((await laptop.online()).online, true);
    await account.advanceClock('999ms');
    assert.deepEqual(await laptop.passkeys(), []);
    await account.advanceClock('1ms');
    const arrived = await events.waitFor('syncArrived', (data) => data.device === 'laptop');
    assert.equal(arrived.data.time, START + 11_000);
    assert.equal((await laptop.passkeys()).length, 1);

    await phone.deletePasskey(id);
    const deleted = await events.waitFor('credentialDeleted');
    assert.equal(deleted.data.credential.credentialId, id);
    assert.equal((await laptop.passkeys()).length, 1, 'the deletion has not arrived');
    await account.advanceClock('2s');
    const removal = await events.waitFor('syncArrived', (data) => data.removal);
    assert.deepEqual([removal.data.device, removal.data.credentialId], ['laptop', id]);
    assert.deepEqual(await laptop.passkeys(), []);
    await events.close();
  });

  test('setSync changes delays for transfers that start later; setClock sets the time, never back', async () => {
    const { account, phone, laptop } = await twoDevices(server, { upload: '1s', download: '1s' });
    const status = await account.setSync({ download: '30s', device: 'laptop' });
    assert.equal(status.devices.find((d) => d.name === 'laptop').downloadDelay, '30s');
    assert.equal(status.devices.find((d) => d.name === 'phone').downloadDelay, '1s');
    await phone.register(creationOptions(), ORIGIN);
    await account.advanceClock('30s');
    assert.deepEqual(await laptop.passkeys(), [], '1 s upload + 30 s download have not passed');
    await account.advanceClock('1s');
    assert.equal((await laptop.passkeys()).length, 1);

    const later = await account.setClock('2027-06-01T12:00:00Z');
    assert.deepEqual(later, { mode: 'virtual', now: Date.parse('2027-06-01T12:00:00Z'), time: '2027-06-01T12:00:00.000Z' });
    assert.equal((await account.setClock(new Date(Date.parse('2027-06-01T12:00:01Z')))).now, Date.parse('2027-06-01T12:00:01Z'));
    await assert.rejects(account.setClock(START), { status: 400, name: 'badInput', detail: /does not go back/ });
    assert.deepEqual(await account.clock(), { mode: 'virtual', now: Date.parse('2027-06-01T12:00:01Z'), time: '2027-06-01T12:00:01.000Z' });
  });

  test('a device added later gets the account\'s passkeys by sync, approved by an enrolled one', async () => {
    const { account, phone } = await twoDevices(server, { upload: '1s', download: '1s' });
    const { id } = await phone.register(creationOptions(), ORIGIN);
    await account.advanceClock('1s');
    const tablet = await account.addDevice({ name: 'tablet', pin: '5555', approvedBy: 'phone' });
    assert.equal(tablet.name, 'tablet');
    assert.equal(tablet.info.biometry.enrolled, true);
    assert.deepEqual(await tablet.passkeys(), []);
    await account.advanceClock('1s');
    assert.deepEqual((await tablet.passkeys()).map((p) => p.id), [id]);
    const assertion = await tablet.sign(requestOptions({ uv: 'required' }), ORIGIN);
    assert.ok(parseAuthenticatorData(unb64url(assertion.response.authenticatorData)).flags.UV);
    assert.deepEqual((await account.devices()).map((d) => d.name), ['phone', 'laptop', 'tablet']);
    await tablet.remove();
    assert.deepEqual((await account.devices()).map((d) => d.name), ['phone', 'laptop']);
  });
});
