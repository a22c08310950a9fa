// In the page's own world: the WebAuthn calls chrome.webAuthenticationProxy does not carry —
// PublicKeyCredential.getClientCapabilities() and the three signal methods — asked of the
// extension through relay.js, which answers for this frame's origin only (the one Chrome gives
// the extension, never one the page names).
(() => {
  'use strict';
  if (typeof PublicKeyCredential === 'undefined') return;  // not a secure context
  const channel = 'authctl-passkeys';
  const waiting = new Map();
  let serial = 0;
  window.addEventListener('message', (event) => {
    const data = event.data;
    if (event.source !== window || !data || data.channel !== channel || data.direction !== 'answer') return;
    const pending = waiting.get(data.id);
    if (!pending) return;
    waiting.delete(data.id);
    if (data.error) pending.reject(data.error.name === 'TypeError' ? new TypeError(data.error.message) : new DOMException(data.error.message, data.error.name));
    else pending.resolve(data.value);
  });
  const ask = (kind, options) => new Promise((resolve, reject) => {
    const id = `${Date.now()}-${++serial}`;
    waiting.set(id, { resolve, reject });
    window.postMessage({ channel, direction: 'ask', id, kind, options }, '*');
  });
  const replace = (name, value) => Object.defineProperty(PublicKeyCredential, name, { value, writable: true, configurable: true });
  // Never rejects, as the browser's never does: no answer from the server is no capability.
  replace('getClientCapabilities', function getClientCapabilities() { return ask('capabilities').catch(() => ({})); });
  for (const signal of ['unknownCredential', 'allAcceptedCredentials', 'currentUserDetails']) {
    const name = `signal${signal[0].toUpperCase()}${signal.slice(1)}`;
    replace(name, async function (options) {
      if (options === null || typeof options !== 'object') throw new TypeError(`Failed to execute '${name}' on 'PublicKeyCredential': the options are not an object.`);
      await ask(signal, JSON.parse(JSON.stringify(options)));
      return undefined;
    });
  }
})();
