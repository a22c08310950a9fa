// Failures come back as AuthctlError, with the problem's name, DOMException and CTAP status.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { AuthctlError, AuthctlServer } from '../src/index.mjs';
import { ORIGIN, creationOptions, requestOptions, startServer } from '../test-support/helpers.mjs';

/** The error `promise` rejects with, asserted to be an AuthctlError. */
async function failure(promise) {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AuthctlError, `expected an AuthctlError, got ${error}`);
    assert.ok(error instanceof Error);
    return error;
  }
  assert.fail('the request succeeded');
}

describe('errors', () => {
  let server, stop;
  before(async () => ({ server, stop } = await startServer()));
  after(() => stop());

  test('a ceremony refused is 422 with the DOMException a browser throws', async () => {
    const account = await server.createAccount({ devices: [{ name: 'phone', pin: '1234', maxPINAttempts: 3 }] });
    const phone = account.device('phone');

    const none = await failure(phone.sign(requestOptions(), ORIGIN));
    assert.deepEqual([none.status, none.name, none.domException, none.ctapStatus], [422, 'notHandled', 'NotAllowedError', 0x2e]);
    assert.match(none.detail, /no passkey/);
    assert.equal(none.problem.status, 422);
    assert.equal(none.method, 'POST');
    assert.equal(none.path, `${phone.path}/sign`);
    assert.match(none.message, /notHandled/);

    const canceled = await failure(phone.register(creationOptions(), ORIGIN, { userAction: 'cancel' }));
    assert.deepEqual([canceled.status, canceled.name, canceled.domException, canceled.ctapStatus], [422, 'canceled', 'NotAllowedError', 0x27]);

    const registration = await phone.register(creationOptions(), ORIGIN);
    const excluded = await failure(phone.register(creationOptions({ exclude: [registration.id] }), ORIGIN));
    assert.deepEqual([excluded.name, excluded.domException, excluded.ctapStatus], ['matchedExcludedCredential', 'InvalidStateError', 0x19]);

    const elsewhere = await failure(phone.sign(requestOptions(), 'https://evil.example'));
    assert.deepEqual([elsewhere.status, elsewhere.name, elsewhere.domException], [422, 'securityError', 'SecurityError']);

    // Wrong PINs: failed, then locked out; unlock() clears the lockout.
    const wrong = await failure(phone.sign(requestOptions({ uv: 'required' }), ORIGIN, { pin: '0000' }));
    assert.deepEqual([wrong.name, wrong.domException], ['failed', 'NotAllowedError']);
    let last;
    for (let i = 0; i < 3 && last?.name !== 'biometryLockout'; i++) {
      last = await failure(phone.sign(requestOptions({ uv: 'required' }), ORIGIN, { pin: '0000' }));
    }
    assert.deepEqual([last.name, last.domException, last.ctapStatus], ['biometryLockout', 'NotAllowedError', 0x3c]);
    assert.equal((await phone.get()).biometry.lockedOut, true);
    const unlocked = await phone.unlock();
    assert.equal(unlocked.biometry.lockedOut, false);
    await phone.sign(requestOptions({ uv: 'required' }), ORIGIN);

    await phone.setPasskeysSupported(false);
    const unsupported = await failure(phone.sign(requestOptions(), ORIGIN));
    assert.deepEqual([unsupported.name, unsupported.domException], ['passkeysNotSupported', 'NotSupportedError']);
    await phone.setPasskeysSupported(true);
    await phone.sign(requestOptions(), ORIGIN);
  });

  test('a device with no PIN cannot verify the user, and its capabilities say so', async () => {
    const account = await server.createAccount({ devices: [{ name: 'kiosk' }] });
    const kiosk = account.device('kiosk');
    const capabilities = await kiosk.capabilities();
    assert.equal(capabilities.isUserVerifyingPlatformAuthenticatorAvailable, false);
    assert.equal(capabilities.capabilities.userVerifyingPlatformAuthenticator, false);
    const error = await failure(kiosk.register(creationOptions({ uv: 'required' }), ORIGIN));
    assert.deepEqual([error.status, error.name, error.domException], [422, 'notHandled', 'NotAllowedError']);
    assert.match(error.detail, /no biometric PIN/);
    // Without user verification required, it registers.
    await kiosk.register(creationOptions({ uv: 'discouraged' }), ORIGIN);
  });

  test("the caller's mistakes are 400, 404 and 405", async () => {
    const account = await server.createAccount();

    const unknown = await failure(server.createAccount({ devices: [{ name: 'phone', colour: 'red' }] }));
    assert.deepEqual([unknown.status, unknown.name, unknown.domException], [400, 'badInput', undefined]);
    assert.match(unknown.detail, /colour/);

    const duplicate = await failure(server.createAccount({ devices: [{ name: 'phone' }, { name: 'phone' }] }));
    assert.deepEqual([duplicate.status, duplicate.name], [400, 'badInput']);

    const realClock = await failure(account.advanceClock('1s'));
    assert.deepEqual([realClock.status, realClock.name], [400, 'usage']);

    const badDuration = await failure(account.setSync({ upload: 'soon' }));
    assert.deepEqual([badDuration.status, badDuration.name], [400, 'badInput']);

    const noAccount = await failure(server.account('no-such-account').get());
    assert.deepEqual([noAccount.status, noAccount.name], [404, 'usage']);

    const noDevice = await failure(account.device('tablet').sign(requestOptions(), ORIGIN));
    assert.deepEqual([noDevice.status, noDevice.name], [404, 'usage']);
    assert.match(noDevice.detail, /tablet/);

    const method = await failure(server.request('PUT', '/accounts'));
    assert.deepEqual([method.status, method.name], [405, 'usage']);

    await assert.rejects(account.device('phone').register(null, ORIGIN), TypeError);
    await assert.rejects(account.device('phone').sign([], ORIGIN), TypeError);
    const noChallenge = await failure(account.device('phone').register({ rp: { id: 'example.com' } }, ORIGIN));
    assert.deepEqual([noChallenge.status, noChallenge.domException], [400, 'TypeError']);

    await account.delete();
    const ended = await failure(account.get());
    assert.equal(ended.status, 404);
    const again = await failure(account.delete());
    assert.equal(again.status, 404);
  });

  test('a wrong token is 401 unauthorized; /health needs none', async () => {
    const stranger = AuthctlServer.connect(server.url, 'not-the-token');
    assert.deepEqual(await stranger.health(), { status: 'ok' });
    const error = await failure(stranger.createAccount());
    assert.deepEqual([error.status, error.name], [401, 'unauthorized']);
    // The server's own token works through connect() as well.
    const same = AuthctlServer.connect(server.url, server.token);
    const account = await same.createAccount();
    assert.equal((await server.account(account.id).get()).id, account.id);
  });
});
