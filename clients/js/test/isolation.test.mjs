// Accounts used in parallel never see each other's passkeys or events.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { ORIGIN, RP_ID, creationOptions, requestOptions, startServer, verifyAssertion, verifyRegistration } from '../test-support/helpers.mjs';

const COUNT = 32;

describe('isolation', () => {
  let server, stop;
  before(async () => ({ server, stop } = await startServer()));
  after(() => stop());

  test(`${COUNT} accounts at once, each with its own passkey and events`, async () => {
    const runs = await Promise.all(Array.from({ length: COUNT }, async (_, i) => {
      const account = await server.createAccount({ devices: [{ name: 'phone', pin: String(1000 + i) }] });
      const events = await account.events();
      const phone = account.device('phone');
      // The same RP and the same user name everywhere: only the account tells them apart.
      const creation = creationOptions({ userName: 'alice' });
      const { id, publicKey } = verifyRegistration(await phone.register(creation, ORIGIN), { challenge: creation.challenge });
      const request = requestOptions({ uv: 'required' });
      const assertion = await phone.sign(request, ORIGIN);
      assert.equal(assertion.id, id, `account ${i} signs with its own passkey`);
      verifyAssertion(assertion, { challenge: request.challenge, publicKey, requireUV: true });
      await events.waitFor('credentialAsserted', (data) => data.credential.credentialId === id);
      return { i, account, phone, events, id, userHandle: creation.user.id };
    }));

    assert.equal(new Set(runs.map((r) => r.id)).size, COUNT, 'every credential id is distinct');
    assert.equal(new Set(runs.map((r) => r.account.id)).size, COUNT, 'every account id is distinct');

    await Promise.all(runs.map(async ({ i, account, phone, events, id, userHandle }) => {
      const held = await phone.passkeys();
      assert.deepEqual(held.map((p) => [p.id, p.rpId, p.userHandle]), [[id, RP_ID, userHandle]], `account ${i} holds its passkey alone`);
      // The next account's passkey, named in allowCredentials, is not here.
      const other = runs[(i + 1) % COUNT];
      await assert.rejects(phone.sign(requestOptions({ allow: [other.id] }), ORIGIN), { name: 'notHandled', domException: 'NotAllowedError' });
      await assert.rejects(phone.passkey(other.id), { status: 404 });
      const devices = await account.devices();
      assert.deepEqual(devices.map((d) => [d.name, d.passkeys]), [['phone', 1]]);
      // Its events name its own passkey only.
      const named = new Set(events.received.map((e) => e.data.credential?.credentialId ?? e.data.credentialId));
      assert.deepEqual([...named], [id], `account ${i}'s events`);
      assert.deepEqual(events.received.map((e) => e.name), ['credentialAdded', 'credentialAsserted']);
    }));

    await Promise.all(runs.map(async ({ account, events }) => {
      await events.close();
      assert.equal(events.ended, true);
      await account.delete();
    }));
  });
});
