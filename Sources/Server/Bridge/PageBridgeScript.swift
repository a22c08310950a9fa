/// The page bridge (docs/browser.md): a script a test injects into a page before the page's own
/// scripts run. It answers the page's WebAuthn calls — `navigator.credentials.create/get` for
/// `publicKey` requests, the availability checks, `getClientCapabilities()` and the three
/// signals — with a device of `authctl serve`, and hands the page objects a browser would:
/// `instanceof PublicKeyCredential`, ArrayBuffers, `toJSON()`. `__AUTHCTL_CONFIG__` becomes
/// `{"server", "token", "account", "device"}`.
enum PageBridgeScript {
    static let text = #"""
// authctl page bridge: this page's WebAuthn calls are answered by authctl serve (docs/browser.md).
(() => {
  'use strict';
  const CONFIG = __AUTHCTL_CONFIG__;
  if (globalThis.__authctlBridge || typeof PublicKeyCredential === 'undefined' || !navigator.credentials) {
    return;  // injected twice, or not a secure context: the browser offers no WebAuthn here either
  }
  Object.defineProperty(globalThis, '__authctlBridge', { value: Object.freeze({ account: CONFIG.account, device: CONFIG.device }) });

  const container = navigator.credentials;
  const nativeCreate = container.create.bind(container);
  const nativeGet = container.get.bind(container);
  const base = `${CONFIG.server}/accounts/${encodeURIComponent(CONFIG.account)}/devices/${encodeURIComponent(CONFIG.device)}`;

  // base64url, as every BufferSource is in WebAuthn's JSON forms.
  const bytesOf = (source) => ArrayBuffer.isView(source)
    ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
    : new Uint8Array(source);
  // WebAuthn's BufferSources are not [AllowShared]: a SharedArrayBuffer (or a view on one) is a
  // TypeError, as in the browser.
  const isShared = (buffer) => typeof SharedArrayBuffer !== 'undefined' && buffer instanceof SharedArrayBuffer;
  const isBufferSource = (value) => value instanceof ArrayBuffer || (ArrayBuffer.isView(value) && !isShared(value.buffer));
  function b64url(source) {
    let text = '';
    for (const byte of bytesOf(source)) text += String.fromCharCode(byte);
    return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }
  function unb64url(text) {
    const plain = atob(String(text).replace(/-/g, '+').replace(/_/g, '/'));
    const bytes = new Uint8Array(plain.length);
    for (let i = 0; i < plain.length; i++) bytes[i] = plain.charCodeAt(i);
    return bytes.buffer;
  }

  // The page's options as their JSON form (what toJSON gives): every BufferSource as base64url,
  // members that are undefined or functions left out. The members WebIDL types as BufferSource
  // must be one, as the browser's own conversion insists.
  function jsonOf(value) {
    if (isBufferSource(value)) return b64url(value);
    if (Array.isArray(value)) return value.map(jsonOf);
    if (value !== null && typeof value === 'object') {
      const out = {};
      for (const [key, member] of Object.entries(value)) {
        if (member === undefined || typeof member === 'function') continue;
        out[key] = jsonOf(member);
      }
      return out;
    }
    return value;
  }
  function requireBufferSource(value, what, call) {
    if (!isBufferSource(value)) {
      throw new TypeError(`Failed to execute '${call}' on 'CredentialsContainer': ${what} is not of type '(ArrayBuffer or ArrayBufferView)'.`);
    }
  }
  // The extension inputs WebIDL types as BufferSource: a string there (base64url a page meant as
  // bytes) is a TypeError in the browser, so it is one here too, before anything is sent.
  function checkExtensionBuffers(extensions, call) {
    if (!extensions || typeof extensions !== 'object') return;
    const need = (value, what) => { if (value !== undefined) requireBufferSource(value, `publicKey.extensions.${what}`, call); };
    const prf = extensions.prf;
    if (prf && typeof prf === 'object') {
      if (prf.eval) { need(prf.eval.first, 'prf.eval.first'); need(prf.eval.second, 'prf.eval.second'); }
      if (prf.evalByCredential && typeof prf.evalByCredential === 'object') {
        for (const [id, values] of Object.entries(prf.evalByCredential)) {
          need(values && values.first, `prf.evalByCredential['${id}'].first`);
          need(values && values.second, `prf.evalByCredential['${id}'].second`);
        }
      }
    }
    need(extensions.credBlob, 'credBlob');
    if (extensions.largeBlob && typeof extensions.largeBlob === 'object') need(extensions.largeBlob.write, 'largeBlob.write');
  }
  function checkCreation(options) {
    if (options === null || typeof options !== 'object') throw new TypeError("Failed to execute 'create' on 'CredentialsContainer': publicKey is not an object.");
    requireBufferSource(options.challenge, 'publicKey.challenge', 'create');
    if (!options.user || typeof options.user !== 'object') throw new TypeError("Failed to execute 'create' on 'CredentialsContainer': publicKey.user is required.");
    requireBufferSource(options.user.id, 'publicKey.user.id', 'create');
    for (const c of options.excludeCredentials || []) requireBufferSource(c && c.id, 'publicKey.excludeCredentials[].id', 'create');
    checkExtensionBuffers(options.extensions, 'create');
  }
  function checkRequest(options) {
    if (options === null || typeof options !== 'object') throw new TypeError("Failed to execute 'get' on 'CredentialsContainer': publicKey is not an object.");
    requireBufferSource(options.challenge, 'publicKey.challenge', 'get');
    for (const c of options.allowCredentials || []) requireBufferSource(c && c.id, 'publicKey.allowCredentials[].id', 'get');
    checkExtensionBuffers(options.extensions, 'get');
  }

  // Where the call comes from: the page's origin, and the top-level origin when a frame is
  // cross-origin with any of its ancestors (as the browser puts it in clientDataJSON).
  function caller() {
    const origin = location.origin;
    if (window === window.top) return { origin };
    let ancestors = location.ancestorOrigins ? Array.from(location.ancestorOrigins) : null;
    if (!ancestors) {
      try { ancestors = [window.top.location.origin]; } catch { ancestors = [document.referrer ? new URL(document.referrer).origin : 'null']; }
    }
    if (ancestors.every((a) => a === origin)) return { origin };
    return { origin, topOrigin: ancestors[ancestors.length - 1], crossOrigin: true };
  }
  function frameAllows(feature) {
    const policy = document.permissionsPolicy || document.featurePolicy;
    return !policy || typeof policy.allowsFeature !== 'function' || policy.allowsFeature(feature);
  }

  // A problem answer as the error the browser would reject with; authctl's own name for it
  // (docs/errors.md) rides along as a non-enumerable `authctlName`, for tests and debugging.
  function errorOf(problem, status) {
    const detail = (problem && (problem.detail || problem.title)) || `authctl serve answered ${status}`;
    const name = problem && problem.domException;
    let error;
    if (name === 'TypeError') error = new TypeError(detail);
    else if (name) error = new DOMException(detail, name);
    else {
      console.error(`authctl page bridge: ${detail}`);
      error = new DOMException(`authctl page bridge: ${detail}`, 'NotAllowedError');
    }
    if (problem && problem.name) Object.defineProperty(error, 'authctlName', { value: problem.name });
    return error;
  }
  async function call(method, path, body, signal) {
    let response;
    try {
      response = await fetch(base + path, {
        method, signal, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer',
        headers: body === undefined ? { Authorization: `Bearer ${CONFIG.token}` }
          : { Authorization: `Bearer ${CONFIG.token}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      if (signal && signal.aborted) throw signal.reason;
      // Most often Local Network Access: a page on a public address may not reach a loopback
      // server unless the browser allows it (docs/browser.md, "Limits").
      const why = `authctl serve is not reachable at ${CONFIG.server} (${error}): it is not running, the request was over `
        + 'its 1 MiB limit, or — for a page on a public address — Chromium needs --disable-features=LocalNetworkAccessChecks';
      console.error(`authctl page bridge: ${why}`);
      throw new DOMException(why, 'NotAllowedError');
    }
    const text = await response.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch { json = null; }
    if (!response.ok) throw errorOf(json, response.status);
    return json;
  }

  // The objects a browser hands the page: own members shadow the prototypes' native getters, so
  // that `instanceof` holds and every member reads as it would.
  const define = (target, members) => {
    for (const [key, value] of Object.entries(members)) {
      Object.defineProperty(target, key, { value, enumerable: typeof value !== 'function', configurable: true });
    }
    return target;
  };
  const BINARY_RESULTS = [['prf', 'results', 'first'], ['prf', 'results', 'second'], ['largeBlob', 'blob'], ['getCredBlob']];
  function extensionResults(json) {
    const results = structuredClone(json || {});
    for (const path of BINARY_RESULTS) {
      let holder = results;
      for (const key of path.slice(0, -1)) holder = holder && holder[key];
      const last = path[path.length - 1];
      if (holder && typeof holder[last] === 'string') holder[last] = unb64url(holder[last]);
    }
    return results;
  }
  function credentialOf(json, made) {
    const r = json.response;
    const response = Object.create((made ? AuthenticatorAttestationResponse : AuthenticatorAssertionResponse).prototype);
    define(response, { clientDataJSON: unb64url(r.clientDataJSON) });
    if (made) {
      define(response, {
        attestationObject: unb64url(r.attestationObject),
        getTransports: () => [...(r.transports || [])],
        getAuthenticatorData: () => unb64url(r.authenticatorData),
        getPublicKey: () => (r.publicKey === undefined || r.publicKey === null ? null : unb64url(r.publicKey)),
        getPublicKeyAlgorithm: () => r.publicKeyAlgorithm,
      });
    } else {
      define(response, {
        authenticatorData: unb64url(r.authenticatorData),
        signature: unb64url(r.signature),
        userHandle: r.userHandle === undefined || r.userHandle === null ? null : unb64url(r.userHandle),
      });
    }
    const credential = Object.create(PublicKeyCredential.prototype);
    return define(credential, {
      id: json.id,
      rawId: unb64url(json.rawId || json.id),
      type: json.type || 'public-key',
      authenticatorAttachment: json.authenticatorAttachment ?? null,
      response,
      getClientExtensionResults: () => extensionResults(json.clientExtensionResults),
      toJSON: () => structuredClone(json),
    });
  }

  // A conditional sign-in waits on the server until the test picks from the autofill list; one
  // the page aborted is ended there before the next begins (a page has one at a time).
  let ending = Promise.resolve();
  const endPending = () => {
    ending = ending.then(() => call('POST', '/autofill', { cancel: true, wait: 0 }).catch(() => {}));
    return ending;
  };

  async function ceremony(kind, publicKey, mediation, uiMode, signal) {
    if (signal && signal.aborted) throw signal.reason;
    if (kind === 'register') checkCreation(publicKey); else checkRequest(publicKey);
    const where = caller();
    const body = { options: jsonOf(publicKey), origin: where.origin };
    if (where.topOrigin) {
      body.topOrigin = where.topOrigin;
      body.framePermission = frameAllows(kind === 'register' ? 'publickey-credentials-create' : 'publickey-credentials-get');
    }
    if (mediation !== undefined) body.mediation = mediation;
    if (uiMode !== undefined) body.uiMode = String(uiMode);
    if (navigator.userActivation) body.userActivation = navigator.userActivation.isActive;
    const conditional = kind === 'sign' && mediation === 'conditional';
    if (conditional) await ending;
    if (signal && signal.aborted) throw signal.reason;  // aborted while an earlier one ended
    const controller = new AbortController();
    const onAbort = () => {
      controller.abort(signal.reason);
      if (conditional) endPending();
    };
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    try {
      let json;
      try {
        json = await call('POST', `/${kind}`, body, controller.signal);
      } catch (error) {
        // One left pending by a page that went away: ended, and this one begins.
        if (!conditional || !(error instanceof DOMException) || !/pending on device .* already/.test(error.message)) throw error;
        await endPending();
        json = await call('POST', `/${kind}`, body, controller.signal);
      }
      if (signal && signal.aborted) throw signal.reason;
      return credentialOf(json, kind === 'register');
    } finally {
      if (signal) signal.removeEventListener('abort', onAbort);
    }
  }

  // The availability checks never reject in a browser: a server that cannot answer is "no".
  const capabilities = () => call('GET', '/capabilities').catch((error) => {
    console.error(`authctl page bridge: ${error.message}`);
    return { capabilities: {}, isUserVerifyingPlatformAuthenticatorAvailable: false, isConditionalMediationAvailable: false };
  });

  function replace(target, name, value) {
    Object.defineProperty(target, name, { value, writable: true, configurable: true, enumerable: false });
  }
  // WebIDL's enum conversion of CredentialCreationOptions / CredentialRequestOptions members: a
  // value that is not one of the enum's is a TypeError before anything else happens.
  function enumMember(value, allowed, member, type, call) {
    if (value === undefined) return undefined;
    const text = String(value);
    if (!allowed.includes(text)) {
      throw new TypeError(`Failed to execute '${call}' on 'CredentialsContainer': Failed to read the '${member}' property from `
        + `'Credential${call === 'create' ? 'Creation' : 'Request'}Options': The provided value '${text}' is not a valid enum value of type ${type}.`);
    }
    return text;
  }
  const MEDIATIONS = ['silent', 'optional', 'conditional', 'required'];
  replace(container, 'create', function create(options) {
    try {
      if (!options || options.publicKey === undefined) return nativeCreate(options);
      const mediation = enumMember(options.mediation, MEDIATIONS, 'mediation', 'CredentialMediationRequirement', 'create');
      return ceremony('register', options.publicKey, mediation, undefined, options.signal);
    } catch (error) {
      return Promise.reject(error);
    }
  });
  replace(container, 'get', function get(options) {
    try {
      if (!options || options.publicKey === undefined) return nativeGet(options);
      const mediation = enumMember(options.mediation, MEDIATIONS, 'mediation', 'CredentialMediationRequirement', 'get');
      const uiMode = enumMember(options.uiMode, ['immediate', 'passive'], 'uiMode', 'CredentialUiModeRequirement', 'get');
      return ceremony('sign', options.publicKey, mediation, uiMode, options.signal);
    } catch (error) {
      return Promise.reject(error);
    }
  });
  replace(PublicKeyCredential, 'isUserVerifyingPlatformAuthenticatorAvailable',
    async function isUserVerifyingPlatformAuthenticatorAvailable() { return (await capabilities()).isUserVerifyingPlatformAuthenticatorAvailable; });
  replace(PublicKeyCredential, 'isConditionalMediationAvailable',
    async function isConditionalMediationAvailable() { return (await capabilities()).isConditionalMediationAvailable; });
  replace(PublicKeyCredential, 'getClientCapabilities',
    async function getClientCapabilities() { return (await capabilities()).capabilities; });
  for (const signal of ['unknownCredential', 'allAcceptedCredentials', 'currentUserDetails']) {
    const name = `signal${signal[0].toUpperCase()}${signal.slice(1)}`;
    replace(PublicKeyCredential, name, async function (options) {
      if (options === null || typeof options !== 'object') throw new TypeError(`Failed to execute '${name}' on 'PublicKeyCredential': the options are not an object.`);
      await call('POST', `/signals/${signal}`, { options: jsonOf(options), origin: caller().origin });
      return undefined;
    });
  }

  // The JSON helpers, for a browser that lacks them (each BufferSource member from base64url).
  const fromB64 = (value) => (typeof value === 'string' ? unb64url(value) : value);
  const credentialList = (list) => list && list.map((c) => ({ ...c, id: fromB64(c.id) }));
  if (typeof PublicKeyCredential.parseCreationOptionsFromJSON !== 'function') {
    replace(PublicKeyCredential, 'parseCreationOptionsFromJSON', function parseCreationOptionsFromJSON(json) {
      return { ...json, challenge: fromB64(json.challenge), user: { ...json.user, id: fromB64(json.user.id) },
        excludeCredentials: credentialList(json.excludeCredentials) };
    });
  }
  if (typeof PublicKeyCredential.parseRequestOptionsFromJSON !== 'function') {
    replace(PublicKeyCredential, 'parseRequestOptionsFromJSON', function parseRequestOptionsFromJSON(json) {
      return { ...json, challenge: fromB64(json.challenge), allowCredentials: credentialList(json.allowCredentials) };
    });
  }
})();
"""#
}
