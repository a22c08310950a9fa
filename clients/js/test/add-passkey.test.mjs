// A passkey added from a PKCS #8 private key made here signs, and its own public key verifies it.
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import { ORIGIN, RP_ID, b64url, requestOptions, signatureVerifies, spki, startServer, unb64url, verifyAssertion } from '../test-support/helpers.mjs';

describe('addPasskey', () => {
  let server, stop;
  before(async () => ({ server, stop } = await startServer()));
  after(() => stop());

  test('from PKCS #8 DER as base64url: listed with its SPKI, and a sign-in verifies with its public key', async () => {
    // A virtual clock and an upload delay: BS stays as given, even once the passkey has uploaded.
    const account = await server.createAccount({ clock: { mode: 'virtual' }, sync: { upload: '5s' } });
    const phone = account.device('phone');
    const events = await account.events();
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pkcs8 = b64url(privateKey.export({ format: 'der', type: 'pkcs8' }));
    const credentialId = b64url(randomBytes(16));
    const userHandle = b64url(randomBytes(12));

    const added = await phone.addPasskey({
      credentialId, rpId: RP_ID, privateKey: pkcs8, userHandle, userName: 'carol', userDisplayName: 'Carol', signCount: 5,
      backupEligibility: true, backupState: false,
    });
    assert.equal(added.id, credentialId);
    assert.equal(added.rpId, RP_ID);
    assert.equal(added.userHandle, userHandle);
    assert.equal(added.userName, 'carol');
    assert.equal(added.signCount, 5);
    assert.deepEqual([added.backupEligible, added.backupState], [true, false]);
    assert.deepEqual(unb64url(added.publicKey), spki(publicKey), 'the listing carries our public key');
    const event = await events.waitFor('credentialAdded');
    assert.deepEqual([event.data.credential.credentialId, event.data.credential.userName], [credentialId, 'carol']);

    const request = requestOptions({ allow: [credentialId] });
    const assertion = await phone.sign(request, ORIGIN);
    assert.equal(assertion.id, credentialId);
    assert.equal(assertion.response.userHandle, userHandle);
    const parsed = verifyAssertion(assertion, { challenge: request.challenge, publicKey });
    assert.ok(parsed.signCount > 5, `the counter moves on from 5 (${parsed.signCount})`);
    assert.deepEqual([parsed.flags.BE, parsed.flags.BS], [true, false]);
    await account.advanceClock('5s');
    const uploaded = await phone.sign(request, ORIGIN);
    const { flags } = verifyAssertion(uploaded, { challenge: request.challenge, publicKey });
    assert.deepEqual([flags.BE, flags.BS], [true, false], 'BS as given, once uploaded too');
    // Another key does not verify it, and a flipped bit does not either.
    assert.equal(signatureVerifies(assertion, generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey), false);
    const flipped = structuredClone(assertion);
    const signature = unb64url(flipped.response.signature);
    signature[signature.length - 1] ^= 0x80;
    flipped.response.signature = b64url(signature);
    assert.equal(signatureVerifies(flipped, publicKey), false);
    await events.close();
  });

  test('from a KeyObject and byte ids; keys authctl cannot use are 400 badInput', async () => {
    const account = await server.createAccount();
    const phone = account.device('phone');
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const id = randomBytes(20);
    const added = await phone.addPasskey({ credentialId: id, rpId: RP_ID, privateKey, userHandle: Buffer.from('user-7') });
    assert.equal(added.id, b64url(id));
    assert.equal(added.userHandle, b64url(Buffer.from('user-7')));
    const request = requestOptions();
    verifyAssertion(await phone.sign(request, ORIGIN, { credentialId: id }), { challenge: request.challenge, publicKey });

    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey;
    await assert.rejects(phone.addPasskey({ credentialId: randomBytes(16), rpId: RP_ID, privateKey: p384, userHandle: 'dQ' }),
      { status: 400, name: 'badInput' });
    await assert.rejects(phone.addPasskey({ credentialId: randomBytes(16), rpId: RP_ID, privateKey: Buffer.from('not a key'), userHandle: 'dQ' }),
      { status: 400, name: 'badInput' });
    await assert.rejects(phone.addPasskey({ credentialId: randomBytes(16), rpId: RP_ID, privateKey }),
      { status: 400, name: 'badInput', detail: /userHandle/ });
    assert.equal((await phone.passkeys()).length, 1, 'nothing refused was added');
  });
});
