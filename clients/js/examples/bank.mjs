#!/usr/bin/env node
/**
 * A worked example: the example bank (docs/examples/rp_server.py, a relying party written with
 * py_webauthn) driven end to end over HTTP, its passkeys made and used by authctl.
 *
 *   node clients/js/examples/bank.mjs
 *
 * It starts the bank (with $PYTHON, else the repository's .venv/bin/python, else python3; the
 * interpreter needs py_webauthn) and `authctl serve` ($AUTHCTL_BIN, else authctl on the PATH),
 * then:
 *
 *   1. signs in to the bank with budi's password, in the phone's browser;
 *   2. registers a passkey on the phone;
 *   3. waits for it to sync to the laptop, on the account's virtual clock, until the syncArrived
 *      event says it is there (before that, the laptop has none to sign in with);
 *   4. signs in on the laptop's browser with it, and approves a transfer there;
 *   5. sends the bank a sign-in with a broken signature, which the bank refuses (HTTP 400).
 *
 * Each step is printed; the exit status is 1 when anything is not as expected.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { AuthctlServer } from '../src/index.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BANK_SCRIPT = join(ROOT, 'docs', 'examples', 'rp_server.py');
const ORIGIN = 'https://yourbank.example';
const RP_ID = 'yourbank.example';

/** Fails the example with `message` unless `condition` holds. */
function expect(condition, message) {
  if (!condition) throw new Error(`not as expected: ${message}`);
}

function step(text) {
  console.log(`- ${text}`);
}

/** The bank's Python interpreter: $PYTHON, else the repository's virtual environment, else python3. */
function python() {
  if (process.env.PYTHON) return process.env.PYTHON;
  const venv = join(ROOT, '.venv', 'bin', 'python');
  return existsSync(venv) ? venv : 'python3';
}

/** Starts the bank on a free port; resolves with its URL and a stop function. */
async function startBank() {
  const child = spawn(python(), [BANK_SCRIPT, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const lines = createInterface({ input: child.stdout });
  const listening = new Promise((resolve) => {
    lines.on('line', (line) => {
      const match = /^listening on (\S+)$/.exec(line);
      if (match) resolve(match[1]);
    });
  });
  const failed = new Promise((resolve) => child.once('error', resolve));
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(resolve, 60_000);
  });
  const url = await Promise.race([
    listening,
    exited.then(({ code }) => Promise.reject(new Error(`the bank exited (${code}) before it listened:\n${stderr}`))),
    failed.then((error) => Promise.reject(new Error(`cannot start the bank with ${python()}: ${error.message}`))),
    late.then(() => Promise.reject(new Error(`the bank did not listen within 60 s:\n${stderr}`))),
  ]).finally(() => clearTimeout(timer));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return { url, stop };
}

/**
 * One browser's view of the bank: JSON over fetch, keeping the session cookie it is given, as a
 * browser would.
 */
class Browser {
  constructor(bank) {
    this.bank = bank;
    this.cookie = undefined;
  }

  async call(method, path, body) {
    const headers = { 'content-type': 'application/json' };
    if (this.cookie) headers.cookie = this.cookie;
    const response = await fetch(this.bank + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const set = response.headers.get('set-cookie');
    if (set) this.cookie = set.split(';')[0];
    return { status: response.status, body: await response.json() };
  }

  /** A call that must answer 200. */
  async ok(method, path, body) {
    const { status, body: answer } = await this.call(method, path, body);
    expect(status === 200, `${method} ${path} answered ${status}: ${JSON.stringify(answer)}`);
    return answer;
  }
}

async function main() {
  const bank = await startBank();
  let authctl;
  let failure;
  try {
    authctl = await AuthctlServer.start();
    step(`the bank listens on ${bank.url}; authctl on ${authctl.url}`);

    // Budi's keychain: a phone and a laptop, sync taking 2 s up and 3 s down, on a clock that
    // moves only when told.
    const account = await authctl.createAccount({
      devices: [{ name: 'phone', pin: '1234' }, { name: 'laptop', pin: '9753' }],
      clock: { mode: 'virtual', start: '2026-01-01T09:00:00Z' },
      sync: { upload: '2s', download: '3s' },
    });
    const phone = account.device('phone');
    const laptop = account.device('laptop');
    const events = await account.events();

    // 1. Password sign-in on the phone.
    const onPhone = new Browser(bank.url);
    const login = await onPhone.ok('POST', '/password/login', { username: 'budi', password: 'rahasia' });
    expect(login.user === 'budi' && login.offerPasskey === true, `the password sign-in: ${JSON.stringify(login)}`);
    step('budi signs in with his password on the phone; the bank offers a passkey');

    // 2. A passkey on the phone.
    const creation = await onPhone.ok('POST', '/register/begin');
    expect(creation.publicKey.rp.id === RP_ID, `the creation options' RP ID: ${creation.publicKey.rp.id}`);
    const registration = await phone.register(creation, ORIGIN);
    const registered = await onPhone.ok('POST', '/register/finish', { credential: registration });
    expect(registered.verified === true && registered.passkeys === 1, `the registration: ${JSON.stringify(registered)}`);
    step(`the phone makes a passkey (${registration.id}); the bank verifies it`);

    // 3. Sync to the laptop on the virtual clock.
    const onLaptop = new Browser(bank.url);
    const early = await onLaptop.ok('POST', '/login/begin');
    try {
      await laptop.sign(early, ORIGIN);
      expect(false, 'the laptop signed in before the passkey reached it');
    } catch (error) {
      expect(error.name === 'notHandled' && error.domException === 'NotAllowedError', `the early sign-in failed with ${error.message}`);
    }
    step('the laptop has no passkey yet: its sign-in is NotAllowedError');
    await account.advanceClock('2s');
    const landed = await events.waitFor('syncLanded', (data) => data.credentialId === registration.id);
    step(`it lands in the store at ${new Date(landed.data.time).toISOString()}`);
    expect((await laptop.passkeys({ rpId: RP_ID })).length === 0, 'the laptop holds the passkey before its download delay');
    await account.advanceClock('3s');
    const arrived = await events.waitFor('syncArrived', (data) => data.device === 'laptop' && data.credentialId === registration.id);
    step(`it arrives on the laptop at ${new Date(arrived.data.time).toISOString()} (syncArrived)`);
    const onTheLaptop = await laptop.passkeys({ rpId: RP_ID });
    expect(onTheLaptop.length === 1 && onTheLaptop[0].id === registration.id, 'the laptop holds the passkey');

    // 4. Sign-in and a transfer on the laptop.
    const request = await onLaptop.ok('POST', '/login/begin');
    const assertion = await laptop.sign(request, ORIGIN);
    const signedIn = await onLaptop.ok('POST', '/login/finish', { credential: assertion });
    expect(signedIn.verified === true && signedIn.user === 'budi', `the laptop's sign-in: ${JSON.stringify(signedIn)}`);
    const me = await onLaptop.ok('GET', '/account');
    expect(me.user === 'budi' && me.passkeys === 1, `the laptop's session: ${JSON.stringify(me)}`);
    step('budi signs in on the laptop with the synced passkey; the bank verifies it');
    const transfer = await onLaptop.ok('POST', '/transfer/begin', { amount: 250000 });
    expect(transfer.publicKey.userVerification === 'required', 'a transfer asks for user verification');
    const approval = await laptop.sign(transfer, ORIGIN);
    const approved = await onLaptop.ok('POST', '/transfer/finish', { credential: approval });
    expect(approved.approved === true && approved.amount === 250000, `the transfer: ${JSON.stringify(approved)}`);
    step('a transfer of 250000 is approved on the laptop (user verified with its own PIN)');

    // 5. A broken signature, refused.
    const stranger = new Browser(bank.url);
    const forged = await laptop.sign(await stranger.ok('POST', '/login/begin'), ORIGIN, { fault: 'bad-signature' });
    const refused = await stranger.call('POST', '/login/finish', { credential: forged });
    expect(refused.status === 400, `a bad signature answered ${refused.status}: ${JSON.stringify(refused.body)}`);
    expect((await stranger.call('GET', '/account')).status === 401, 'the refused sign-in left a session');
    step(`a sign-in with a broken signature is refused: HTTP ${refused.status} (${refused.body.error})`);

    const asserted = await events.waitFor('credentialAsserted', (data) => data.authenticatorId === 'laptop');
    expect(asserted.data.credential.credentialId === registration.id, 'the laptop signed with the phone\'s passkey');
    await events.close();
    await account.delete();
  } catch (error) {
    failure = error;
  }
  const [, stopped] = await Promise.allSettled([bank.stop(), authctl?.stop()]);
  if (failure) throw failure;
  if (stopped.status === 'rejected') throw stopped.reason;
  step('done: authctl serve stopped with exit 0');
}

main().catch((error) => {
  console.error(`bank example failed: ${error.stack ?? error}`);
  process.exitCode = 1;
});
