// YourBank's web front end: passwords and passkeys on the standard WebAuthn API
// (PublicKeyCredential.parseCreationOptionsFromJSON / parseRequestOptionsFromJSON, toJSON()), as
// the seed guide's app does them — a password sign-in that offers a passkey (at most three
// times), an autofill sign-in, a transfer that asks the customer to verify again, and the errors
// a page must handle. Served by docs/examples/rp_server.py; docs/browser.md walks through it.
'use strict';

const $ = (id) => document.getElementById(id);
let autofill = null;  // the AbortController of the pending autofill (conditional) sign-in

async function api(path, body) {
  const response = await fetch(path, body === undefined ? { method: 'GET' }
    : { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const json = await response.json().catch(() => ({}));
  if (!response.ok) throw Object.assign(new Error(json.error || `HTTP ${response.status}`), { status: response.status, body: json });
  return json;
}

function say(text, kind = '') {
  $('message').textContent = text;
  $('message').className = kind;
  $('message').hidden = !text;
}

function show(section) {
  for (const id of ['sign-in', 'upgrade', 'account']) $(id).hidden = id !== section;
  $('sign-out').hidden = section === 'sign-in';
  document.body.dataset.screen = section;
}

// Whether to offer passkeys at all: a browser without WebAuthn, or whose platform authenticator
// cannot make passkeys, gets the password form only (the guide's "passkeys not supported").
async function passkeysAvailable() {
  if (!window.PublicKeyCredential) return false;
  try {
    if (typeof PublicKeyCredential.getClientCapabilities === 'function') {
      const capabilities = await PublicKeyCredential.getClientCapabilities();
      if (capabilities.passkeyPlatformAuthenticator === false) return false;
    }
    return await PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable();
  } catch {
    return false;
  }
}

// What each failure means to the customer. A browser says NotAllowedError both when the
// customer cancels and when no passkey answers (WebAuthn keeps the two apart from the page, for
// privacy): either way the password form stays, and the autofill request resumes.
function explain(error, action) {
  switch (error.name) {
    case 'AbortError':
      return '';
    case 'NotAllowedError':
      return action === 'transfer'
        ? "We couldn't verify it's you, so the transfer was not sent. Try again."
        : action === 'create'
          ? 'No passkey was created. You can create one later on your account page.'
          : 'Passkey sign-in was cancelled, or no passkey was found. Use your password, or pick a passkey from the username field.';
    case 'InvalidStateError':
      return 'You already have a passkey for YourBank on this device.';
    case 'SecurityError':
      return "This page's address may not use YourBank's passkeys.";
    case 'NotSupportedError':
      return 'This browser cannot make a passkey YourBank accepts.';
    default:
      return `Something went wrong (${error.name || 'error'}: ${error.message}).`;
  }
}

// The autofill sign-in: pending while the sign-in page shows, answered when the customer picks a
// passkey from the username field's suggestions.
async function startAutofill() {
  autofill?.abort();
  if (!window.PublicKeyCredential || !(await PublicKeyCredential.isConditionalMediationAvailable?.())) return;
  const controller = new AbortController();
  autofill = controller;
  document.body.dataset.autofill = 'pending';
  const started = Date.now();
  try {
    const { publicKey } = await api('/login/begin', {});
    const credential = await navigator.credentials.get({
      mediation: 'conditional', signal: controller.signal,
      publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(publicKey),
    });
    await finishSignIn(credential);
  } catch (error) {
    if (controller.signal.aborted) return;
    say(explain(error, 'sign-in'));
    // It timed out, or the customer dismissed the list: offer it again (not in a tight loop).
    if (error.name === 'NotAllowedError' && Date.now() - started > 1000) setTimeout(startAutofill, 0);
  } finally {
    if (autofill === controller) document.body.dataset.autofill = 'idle';
  }
}

async function passkeySignIn() {
  autofill?.abort();
  say('');
  try {
    const { publicKey } = await api('/login/begin', {});
    const credential = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(publicKey) });
    await finishSignIn(credential);
  } catch (error) {
    say(explain(error, 'sign-in'));
    $('password').focus();
    startAutofill();  // the guide's handleUserCanceled: resume the autofill request
  }
}

async function finishSignIn(credential) {
  try {
    await api('/login/finish', credential.toJSON());
  } catch (error) {
    if (error.body?.code === 'unknownCredential') {
      // The bank no longer knows this passkey: tell the customer's keychain, which removes it
      // (and, once it syncs, from their other devices).
      await PublicKeyCredential.signalUnknownCredential?.({ rpId: location.hostname, credentialId: error.body.credentialId });
      say('That passkey was removed from your account. Sign in with your password.');
      startAutofill();
      return;
    }
    throw error;
  }
  say('Signed in with your passkey.', 'ok');
  await showAccount();
}

async function passwordSignIn(event) {
  event.preventDefault();
  try {
    const answer = await api('/password/login', { username: $('username').value, password: $('password').value });
    autofill?.abort();
    say('');
    if (answer.offerPasskey && await passkeysAvailable()) {
      show('upgrade');
    } else {
      await showAccount();
    }
  } catch (error) {
    say(error.status === 401 ? 'Wrong username or password.' : explain(error, 'sign-in'));
  }
}

async function createPasskey() {
  try {
    const { publicKey } = await api('/register/begin', {});
    const credential = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(publicKey) });
    await api('/register/finish', credential.toJSON());
    say('Passkey created. Next time, sign in with your face or fingerprint.', 'ok');
  } catch (error) {
    say(explain(error, 'create'));
  }
  await showAccount();
}

async function declineUpgrade() {
  await api('/upgrade/decline', {});
  await showAccount();
}

async function transfer(event) {
  event.preventDefault();
  const result = $('transfer-result');
  result.hidden = true;
  try {
    const { publicKey } = await api('/transfer/begin', { amount: $('amount').value });
    const credential = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(publicKey) });
    const answer = await api('/transfer/finish', credential.toJSON());
    result.textContent = `Transfer of Rp ${answer.amount} approved.`;
    result.className = 'ok';
  } catch (error) {
    result.textContent = error.name === 'Error' ? `The bank refused it: ${error.message}` : explain(error, 'transfer');
    result.className = '';
  }
  result.hidden = false;
}

async function removePasskey(id) {
  await api('/passkeys/remove', { id });
  say('The bank forgot that passkey. Your device removes it the next time it is offered.');
  await showAccount();
}

async function showAccount() {
  const account = await api('/account');
  const { passkeys } = await api('/passkeys');
  $('account-user').textContent = account.user;
  const list = $('passkey-list');
  list.replaceChildren(...passkeys.map((p) => {
    const item = document.createElement('li');
    const label = document.createElement('code');
    label.textContent = `${p.id.slice(0, 12)}… ${p.createdAt.slice(0, 10)}`;
    const remove = document.createElement('button');
    remove.textContent = 'Remove';
    remove.addEventListener('click', () => removePasskey(p.id));
    item.append(label, remove);
    return item;
  }));
  $('no-passkeys').hidden = passkeys.length > 0;
  $('create-passkey').hidden = passkeys.length > 0 || !(await passkeysAvailable());
  show('account');
}

async function signOut() {
  await api('/logout', {});
  say('');
  await showSignIn();
}

async function showSignIn() {
  show('sign-in');
  $('passkey-option').hidden = !(await passkeysAvailable());
  startAutofill();
}

$('password-form').addEventListener('submit', passwordSignIn);
$('passkey-sign-in').addEventListener('click', passkeySignIn);
$('upgrade-accept').addEventListener('click', createPasskey);
$('upgrade-decline').addEventListener('click', declineUpgrade);
$('create-passkey').addEventListener('click', createPasskey);
$('transfer-form').addEventListener('submit', transfer);
$('sign-out').addEventListener('click', signOut);

api('/account').then(showAccount, showSignIn).finally(() => { document.body.dataset.ready = 'true'; });
