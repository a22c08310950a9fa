// A sign-in page as a site has one: a conditional (autofill) sign-in pending from its load, for the
// RP ID in the query (?rpId=, else the page's host), which `window.controller` aborts.
// `window.outcome` is what it ended with: the credential's toJSON(), or the error's name.
'use strict';

window.challenge = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
window.outcome = null;
window.controller = new AbortController();
(async () => {
  const rpId = new URLSearchParams(location.search).get('rpId') || location.hostname;
  try {
    const credential = await navigator.credentials.get({ mediation: 'conditional', signal: window.controller.signal,
      publicKey: PublicKeyCredential.parseRequestOptionsFromJSON({ challenge: window.challenge, rpId }) });
    window.outcome = { json: credential.toJSON() };
  } catch (error) {
    window.outcome = { thrown: error.name, message: error.message };
  }
})();
