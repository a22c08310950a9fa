// Registrations and sign-ins over HTTP, each judged with node:crypto as a relying party would.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import {
  ORIGIN, RP_ID, creationOptions, decodeCborExactly, parseAuthenticatorData, randomId, requestOptions, signatureVerifies, startServer, tamper,
  unb64url, verifyAssertion, verifyRegistration,
} from '../test-support/helpers.mjs';

describe('ceremonies', () => {
  let server, stop;
  before(async () => ({ server, stop } = await startServer()));
  after(() => stop());

  test('a registration and a sign-in verify with node:crypto, and tampered ones do not', async () => {
    const account = await server.createAccount({ devices: [{ name: 'phone', pin: '1234' }] });
    const phone = account.device('phone');

    const creation = creationOptions({ userName: 'alice' });
    const registration = await phone.register(creation, ORIGIN);
    assert.equal(registration.authenticatorAttachment, 'platform');
    const { id, publicKey, authData } = verifyRegistration(registration, { challenge: creation.challenge });
    assert.equal(authData.signCount, 0);
    assert.ok(authData.flags.BE, 'a synced passkey is backup eligible');

    // The device lists it with the same public key the attestation carried.
    const listed = await phone.passkeys({ rpId: RP_ID });
    assert.equal(listed.length, 1);
    assert.equal(listed[0].id, id);
    assert.equal(listed[0].userName, 'alice');
    assert.equal(listed[0].userHandle, creation.user.id);
    assert.deepEqual(unb64url(listed[0].publicKey), publicKey.export({ format: 'der', type: 'spki' }));
    assert.deepEqual(await phone.passkey(id), listed[0]);

    const request = requestOptions({ allow: [id], uv: 'required' });
    const assertion = await phone.sign(request, ORIGIN);
    assert.equal(assertion.id, id);
    assert.equal(assertion.response.userHandle, creation.user.id);
    const parsed = verifyAssertion(assertion, { challenge: request.challenge, publicKey, requireUV: true });
    assert.equal(parsed.flags.UV, true);
    // The key from the listing (SPKI DER) verifies it too.
    assert.ok(signatureVerifies(assertion, listed[0].publicKey));

    // One bit flipped anywhere that is signed, or in the signature, and it no longer verifies.
    assert.equal(signatureVerifies(tamper(assertion, 'signature', 20), publicKey), false);
    assert.equal(signatureVerifies(tamper(assertion, 'authenticatorData', 0), publicKey), false);
    assert.equal(signatureVerifies(tamper(assertion, 'clientDataJSON', 5), publicKey), false);
    // Nor under another passkey's key.
    const other = await phone.register(creationOptions({ userName: 'bob' }), ORIGIN);
    assert.equal(signatureVerifies(assertion, other.response.publicKey), false);
    // A check that fails throws: the helper is not one that accepts anything.
    assert.throws(() => verifyAssertion(assertion, { challenge: randomId(), publicKey }), /challenge/);
    assert.throws(() => verifyAssertion(assertion, { challenge: request.challenge, publicKey, origin: 'https://evil.example' }), /origin/);
    assert.throws(() => verifyAssertion(assertion, { challenge: request.challenge, publicKey, rpId: 'evil.example' }), /rpIdHash/);
  });

  test('options may come wrapped in publicKey, with binary members as bytes', async () => {
    const account = await server.createAccount();
    const phone = account.device('phone');
    const challenge = Buffer.from('a challenge of thirty-two bytes!');
    const userId = new Uint8Array([7, 7, 7, 7]);
    const options = creationOptions();
    const registration = await phone.register({ publicKey: { ...options, challenge, user: { ...options.user, id: userId } } }, ORIGIN);
    const { publicKey } = verifyRegistration(registration, { challenge: challenge.toString('base64url') });
    const request = { ...requestOptions(), challenge: new Uint8Array(challenge) };
    const assertion = await phone.sign({ publicKey: request }, ORIGIN);
    assert.equal(assertion.response.userHandle, Buffer.from(userId).toString('base64url'));
    verifyAssertion(assertion, { challenge: challenge.toString('base64url'), publicKey });
  });

  test('a sign-in picks the passkey named by credentialId or user', async () => {
    const account = await server.createAccount();
    const phone = account.device('phone');
    const alice = await phone.register(creationOptions({ userName: 'alice' }), ORIGIN);
    const bob = await phone.register(creationOptions({ userName: 'bob' }), ORIGIN);
    assert.equal((await phone.sign(requestOptions(), ORIGIN, { user: 'alice' })).id, alice.id);
    assert.equal((await phone.sign(requestOptions(), ORIGIN, { credentialId: bob.id })).id, bob.id);
    assert.equal((await phone.sign(requestOptions(), ORIGIN, { credentialId: unb64url(alice.id) })).id, alice.id);
  });

  test('faults: a bad signature fails verification; a wrong challenge or origin fails the client data check', async () => {
    const account = await server.createAccount();
    const phone = account.device('phone');
    const creation = creationOptions();
    const { publicKey } = verifyRegistration(await phone.register(creation, ORIGIN), { challenge: creation.challenge });

    const request = requestOptions();
    const bad = await phone.sign(request, ORIGIN, { fault: 'bad-signature' });
    assert.equal(signatureVerifies(bad, publicKey), false);
    assert.throws(() => verifyAssertion(bad, { challenge: request.challenge, publicKey }), /signature verifies/);

    const wrongChallenge = await phone.sign(request, ORIGIN, { fault: 'wrong-challenge' });
    assert.ok(signatureVerifies(wrongChallenge, publicKey), 'a wrong challenge is correctly signed');
    assert.throws(() => verifyAssertion(wrongChallenge, { challenge: request.challenge, publicKey }), /challenge/);

    const wrongOrigin = await phone.sign(request, ORIGIN, { fault: 'wrong-origin' });
    assert.throws(() => verifyAssertion(wrongOrigin, { challenge: request.challenge, publicKey }), /origin/);

    const wrongRp = await phone.sign(request, ORIGIN, { fault: 'wrong-rp-id-hash' });
    assert.ok(signatureVerifies(wrongRp, publicKey));
    assert.throws(() => verifyAssertion(wrongRp, { challenge: request.challenge, publicKey }), /rpIdHash/);

    // And the untouched one passes the same checks.
    verifyAssertion(await phone.sign(request, ORIGIN), { challenge: request.challenge, publicKey });
  });

  test('backup flags set by hand show in the next assertion, and a deleted passkey no longer signs', async () => {
    const account = await server.createAccount();
    const phone = account.device('phone');
    const creation = creationOptions();
    const { id, publicKey } = verifyRegistration(await phone.register(creation, ORIGIN), { challenge: creation.challenge });
    const changed = await phone.setBackupFlags(id, { backupEligible: true, backupState: true });
    assert.equal(changed.backupState, true);
    assert.equal(changed.backupStateSetByHand, true);
    const request = requestOptions({ allow: [id] });
    const assertion = await phone.sign(request, ORIGIN);
    const flags = parseAuthenticatorData(unb64url(assertion.response.authenticatorData)).flags;
    assert.deepEqual([flags.BE, flags.BS], [true, true]);
    verifyAssertion(assertion, { challenge: request.challenge, publicKey });

    await phone.deletePasskey(id);
    assert.deepEqual(await phone.passkeys(), []);
    await assert.rejects(phone.sign(request, ORIGIN), { name: 'notHandled', domException: 'NotAllowedError', status: 422 });
    await assert.rejects(phone.passkey(id), { name: 'notHandled', status: 404 });
  });
  test('a packed attestation chains to the root every account of the server gives', async () => {
    const [first, second] = [await server.createAccount({ profile: 'security-key' }), await server.createAccount({ profile: 'security-key' })];
    const ca = await first.attestationCA();
    assert.deepEqual(await second.attestationCA(), ca);
    const root = new X509Certificate(ca.root), intermediate = new X509Certificate(ca.intermediate);
    assert.ok(root.verify(root.publicKey), 'the root is self-signed');
    const registration = await second.device('phone').register({ ...creationOptions(), attestation: 'direct' }, ORIGIN);
    const attestation = decodeCborExactly(unb64url(registration.response.attestationObject));
    assert.equal(attestation.get('fmt'), 'packed');
    const chain = attestation.get('attStmt').get('x5c').map((der) => new X509Certificate(der));
    assert.ok(chain[0].checkIssued(intermediate) && chain[0].verify(intermediate.publicKey), 'the leaf is the intermediate\'s');
    assert.ok(intermediate.verify(root.publicKey), 'the intermediate is the root\'s');
    assert.ok(!chain[0].verify(root.publicKey), 'the leaf is not signed by the root itself');
  });
});
