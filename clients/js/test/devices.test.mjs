// A device's state: offline and online, reset and PINs, profile, capabilities, signals, export and
// import, and the conditional sign-in ended by an autofill pick.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  ORIGIN, RP_ID, b64url, creationOptions, parseAuthenticatorData, requestOptions, startServer, unb64url, verifyAssertion,
  verifyRegistration, waitUntil,
} from '../test-support/helpers.mjs';

describe('devices', () => {
  let server, stop;
  before(async () => ({ server, stop } = await startServer()));
  after(() => stop());

  test('offline and online, reset and a new PIN', async () => {
    const account = await server.createAccount({ devices: [{ name: 'phone', pin: '1234' }, { name: 'laptop', pin: '9753' }] });
    const phone = account.device('phone');
    const laptop = account.device('laptop');
    assert.deepEqual(account.info.devices.map((d) => d.name), ['phone', 'laptop']);
    assert.equal((await laptop.offline()).online, false);
    assert.equal((await laptop.get()).online, false);
    assert.equal((await laptop.online()).online, true);

    const reset = await laptop.reset();
    assert.equal(reset.biometry.enrolled, false);
    // Re-enrolled with its former PIN, as a restored phone asks for the old one's passcode.
    const enrolled = await laptop.setPin('2468', { currentPin: '9753' });
    assert.equal(enrolled.device.biometry.enrolled, true);
    assert.equal(enrolled.deletedPasskeys, 0);

    // The phone's PIN changed: the server types the new one from then on; the old one fails.
    await phone.setPin('4321', { currentPin: '1234' });
    const creation = creationOptions();
    const { publicKey } = verifyRegistration(await phone.register(creation, ORIGIN), { challenge: creation.challenge });
    await assert.rejects(phone.sign(requestOptions({ uv: 'required' }), ORIGIN, { pin: '1234' }), { name: 'failed' });
    const request = requestOptions({ uv: 'required' });
    verifyAssertion(await phone.sign(request, ORIGIN), { challenge: request.challenge, publicKey, requireUV: true });
    // The laptop (no sync delays) holds it too, and verifies the user with its new PIN.
    const other = requestOptions({ uv: 'required' });
    verifyAssertion(await laptop.sign(other, ORIGIN), { challenge: other.challenge, publicKey, requireUV: true });
  });

  test('a profile decides what new passkeys are; capabilities answer for the device', async () => {
    const account = await server.createAccount();
    const phone = account.device('phone');
    const capabilities = await phone.capabilities();
    assert.equal(capabilities.isUserVerifyingPlatformAuthenticatorAvailable, true);
    assert.equal(typeof capabilities.capabilities.conditionalGet, 'boolean');

    await phone.setProfile('windows-hello');
    const creation = creationOptions();
    const registration = await phone.register(creation, ORIGIN);
    const { id, authData } = verifyRegistration(registration, { challenge: creation.challenge });
    assert.equal(authData.flags.BE, false);
    assert.equal(b64url(authData.attested.aaguid), b64url(Buffer.from('08987058cadc4b81b6e130de50dcbe96', 'hex')), 'the profile\'s AAGUID');
    const listed = await phone.passkey(id);
    assert.equal(listed.profile, 'windows-hello');
    assert.equal(listed.backupEligible, false, 'windows-hello passkeys are device-bound');
  });

  test('signals rename, hide and delete passkeys', async () => {
    const account = await server.createAccount();
    const phone = account.device('phone');
    const events = await account.events();
    const alice = creationOptions({ userName: 'alice' });
    const bob = creationOptions({ userName: 'bob' });
    const aliceId = (await phone.register(alice, ORIGIN)).id;
    const bobId = (await phone.register(bob, ORIGIN)).id;

    const renamed = await phone.signal('currentUserDetails', { rpId: RP_ID, userId: alice.user.id, name: 'alice@example.com', displayName: 'Alice A.' }, ORIGIN);
    assert.deepEqual(renamed, { removed: [], hidden: [], restored: [], updated: [aliceId] });
    assert.equal((await phone.passkey(aliceId)).userName, 'alice@example.com');

    const hidden = await phone.signal('allAcceptedCredentials', { rpId: RP_ID, userId: bob.user.id, allAcceptedCredentialIds: [] }, ORIGIN);
    assert.deepEqual(hidden.hidden, [bobId]);
    assert.equal((await phone.passkey(bobId)).hidden, true);
    const restored = await phone.signal('allAcceptedCredentials', { rpId: RP_ID, userId: bob.user.id, allAcceptedCredentialIds: [bobId] }, ORIGIN);
    assert.deepEqual(restored.restored, [bobId]);

    const removed = await phone.signal('unknownCredential', { rpId: RP_ID, credentialId: aliceId }, ORIGIN);
    assert.deepEqual(removed.removed, [aliceId]);
    assert.deepEqual((await phone.passkeys()).map((p) => p.id), [bobId]);
    const deleted = await events.waitFor('credentialDeleted');
    assert.equal(deleted.data.credential.credentialId, aliceId);
    const updated = await events.waitFor('credentialUpdated', (data) => data.credential.credentialId === aliceId);
    assert.equal(updated.data.credential.userName, 'alice@example.com');
    await events.close();
  });

  test('an exported passkey imports into another account and signs there', async () => {
    const from = await server.createAccount();
    const creation = creationOptions();
    const { id, publicKey } = verifyRegistration(await from.device('phone').register(creation, ORIGIN), { challenge: creation.challenge });
    const envelope = await from.device('phone').exportPasskey(id, { passphrase: 'correct horse battery staple' });
    assert.match(envelope, /^[A-Za-z0-9_-]+$/);

    const to = await server.createAccount();
    await assert.rejects(to.device('phone').importPasskey({ envelope, passphrase: 'wrong' }), { name: 'vaultLocked', detail: /wrong passphrase/ });
    const imported = await to.device('phone').importPasskey({ envelope, passphrase: 'correct horse battery staple' });
    assert.equal(imported.id, id);
    assert.deepEqual(unb64url(imported.publicKey), publicKey.export({ format: 'der', type: 'spki' }));
    const request = requestOptions({ allow: [id] });
    verifyAssertion(await to.device('phone').sign(request, ORIGIN), { challenge: request.challenge, publicKey });
  });

  test('a conditional sign-in waits for the autofill pick; passed by, it times out', async () => {
    const account = await server.createAccount();
    const phone = account.device('phone');
    const alice = await phone.register(creationOptions({ userName: 'alice' }), ORIGIN);
    const bob = await phone.register(creationOptions({ userName: 'bob' }), ORIGIN);
    // Some connections in fetch's pool first, as in a suite that has run for a while.
    await Promise.all(Array.from({ length: 8 }, () => phone.get()));
    assert.equal(await phone.autofillPending(), false);

    for (const [pick, expected] of [[{ user: 'alice' }, alice.id], [{ credentialId: bob.id }, bob.id], [{ credentialId: unb64url(alice.id) }, alice.id]]) {
      const request = requestOptions();
      const pending = phone.sign(request, ORIGIN, { mediation: 'conditional' });
      pending.catch(() => {}); // judged below
      await waitUntil(() => phone.autofillPending(), 'the conditional sign-in is pending');
      // While it is pending, other requests (on the same account too) are answered: it holds no
      // thread and no lock. Were they held, the pick below would come after the sign-in's timeout.
      const states = await Promise.all(Array.from({ length: 16 }, () => phone.get()));
      assert.ok(states.every((state) => state.passkeys === 2));
      assert.deepEqual(await phone.autofill({ ...pick, wait: '30s' }), { picked: true });
      const assertion = await pending;
      assert.equal(assertion.id, expected);
      const key = (await phone.passkey(expected)).publicKey;
      assert.ok(parseAuthenticatorData(unb64url(assertion.response.authenticatorData)).flags.UP);
      verifyAssertion(assertion, { challenge: request.challenge, publicKey: key });
    }

    // Passing the list by does not reject a conditional sign-in: it waits out its timeout (which
    // passes at once here), as a browser's does.
    const pending = phone.sign({ publicKey: requestOptions(), mediation: 'conditional' }, ORIGIN);
    const refused = assert.rejects(pending, { status: 422, name: 'timedOut', domException: 'NotAllowedError' });
    await waitUntil(() => phone.autofillPending(), 'the conditional sign-in is pending');
    await phone.autofill({ cancel: true });
    await refused;
    assert.equal(await phone.autofillPending(), false);
  });
});
