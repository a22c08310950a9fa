// authctl page bridge: this page's WebAuthn calls are answered by authctl serve (docs/browser.md).

// ---- An engine without WebAuthn (WebKitGTK and WPE are built without it) ----------------------
// The interfaces WebKit has when it has WebAuthn, supplied empty — their members refuse every
// object but those the bridge below makes, in WebKit's words — so that the bridge has what it
// wraps in every engine. Shaped as WebKit's IDL (Source/WebCore/Modules/webauthn/*.idl and
// credentialmanagement/*.idl; docs/browser.md, "WebKitGTK"): member order, which statics each
// interface has (isConditionalMediationAvailable is Credential's), the error each refusal names.
// An engine that has PublicKeyCredential, or a page that is not a secure context, is left alone.
(() => {
  'use strict';
  if (typeof PublicKeyCredential !== 'undefined' || typeof navigator === 'undefined' || !globalThis.isSecureContext
      || 'credentials' in navigator) {
    return;
  }
  const define = (target, name, value) => Object.defineProperty(target, name, { value, writable: true, enumerable: true, configurable: true });
  // An interface object (WebIDL §3.7.1): not a constructor for a page, its prototype chained to
  // the parent interface's, a property of the global as WebKit makes them.
  function interfaceObject(name, parent) {
    const object = { [name]: function () { throw new TypeError('Illegal constructor'); } }[name];
    Object.defineProperty(object, 'prototype', { value: Object.create(parent ? parent.prototype : Object.prototype), writable: false });
    if (parent) Object.setPrototypeOf(object, parent);
    Object.defineProperty(object.prototype, 'constructor', { value: object, writable: true, enumerable: false, configurable: true });
    Object.defineProperty(object.prototype, Symbol.toStringTag, { value: name, writable: false, enumerable: false, configurable: true });
    Object.defineProperty(globalThis, name, { value: object, writable: true, enumerable: false, configurable: true });
    return object;
  }
  // Members that refuse every object: the bridge answers for the objects it makes, and these are
  // what a stranger meets (JavaScriptCore's bindings' wording).
  function attributes(object, ...names) {
    const iface = object.name;
    for (const name of names) {
      const { get } = Object.getOwnPropertyDescriptor({
        get [name]() { throw new TypeError(`The ${iface}.${name} getter can only be used on instances of ${iface}`); },
      }, name);
      Object.defineProperty(object.prototype, name, { get, enumerable: true, configurable: true });
    }
  }
  function operations(object, ...names) {
    const iface = object.name;
    for (const name of names) {
      define(object.prototype, name, { [name]() { throw new TypeError(`Can only call ${iface}.${name} on instances of ${iface}`); } }[name]);
    }
  }
  const statics = (object, entries) => { for (const [name, length, body] of entries) {
    const method = { [name](...args) { return body(...args); } }[name];
    Object.defineProperty(method, 'length', { value: length });
    define(object, name, method);
  } };
  const no = () => Promise.resolve(false);

  const CredentialInterface = interfaceObject('Credential');
  attributes(CredentialInterface, 'id', 'type');
  statics(CredentialInterface, [['isConditionalMediationAvailable', 0, no]]);
  const PublicKeyCredentialInterface = interfaceObject('PublicKeyCredential', CredentialInterface);
  attributes(PublicKeyCredentialInterface, 'rawId', 'response', 'authenticatorAttachment');
  operations(PublicKeyCredentialInterface, 'getClientExtensionResults', 'toJSON');
  const notObject = (name) => Promise.reject(new TypeError(`Argument 1 ('options') to PublicKeyCredential.${name} must be an object`));
  statics(PublicKeyCredentialInterface, [
    ['isUserVerifyingPlatformAuthenticatorAvailable', 0, no],
    ['getClientCapabilities', 0, () => Promise.resolve({})],
    ...['signalUnknownCredential', 'signalAllAcceptedCredentials', 'signalCurrentUserDetails']
      .map((name) => [name, 1, () => notObject(name)]),
  ]);
  const AuthenticatorResponseInterface = interfaceObject('AuthenticatorResponse');
  attributes(AuthenticatorResponseInterface, 'clientDataJSON');
  const AuthenticatorAttestationResponseInterface = interfaceObject('AuthenticatorAttestationResponse', AuthenticatorResponseInterface);
  attributes(AuthenticatorAttestationResponseInterface, 'attestationObject');
  operations(AuthenticatorAttestationResponseInterface, 'getTransports', 'getAuthenticatorData', 'getPublicKey', 'getPublicKeyAlgorithm');
  const AuthenticatorAssertionResponseInterface = interfaceObject('AuthenticatorAssertionResponse', AuthenticatorResponseInterface);
  attributes(AuthenticatorAssertionResponseInterface, 'authenticatorData', 'signature', 'userHandle');

  // navigator.credentials: the page's one CredentialsContainer ([SameObject]). Its create() and
  // get() answer what is not for `publicKey` as WebKit's CredentialsContainer.cpp does (the
  // bridge answers the rest); store() is not implemented there either.
  const CredentialsContainerInterface = interfaceObject('CredentialsContainer');
  const container = Object.create(CredentialsContainerInterface.prototype);
  const refusal = (name, self) => (self === container ? null
    : new TypeError(`Can only call CredentialsContainer.${name} on instances of CredentialsContainer`));
  const methods = {
    get(options) { return request('get', this, options); },
    store(credential) {
      const stranger = refusal('store', this);
      if (stranger) return Promise.reject(stranger);
      if (!arguments.length) return Promise.reject(new TypeError('Not enough arguments'));
      if (!(credential instanceof CredentialInterface)) {
        return Promise.reject(new TypeError("Argument 1 ('credential') to CredentialsContainer.store must be an instance of BasicCredential"));
      }
      return Promise.reject(new DOMException('Not implemented.', 'NotSupportedError'));
    },
    create(options) { return request('create', this, options); },
    preventSilentAccess() {
      const stranger = refusal('preventSilentAccess', this);
      return stranger ? Promise.reject(stranger) : Promise.resolve(undefined);
    },
  };
  function request(name, self, options) {
    const stranger = refusal(name, self);
    if (stranger) return Promise.reject(stranger);
    if (options !== undefined && options !== null && typeof options !== 'object') {
      return Promise.reject(new TypeError('Type error'));
    }
    if (options && options.signal && options.signal.aborted) return Promise.reject(new DOMException('Aborted by AbortSignal.', 'AbortError'));
    return Promise.reject(new DOMException('Only PublicKeyCredential is supported.', 'NotSupportedError'));
  }
  for (const name of ['get', 'store', 'create', 'preventSilentAccess']) define(CredentialsContainerInterface.prototype, name, methods[name]);
  const { get: credentials } = Object.getOwnPropertyDescriptor({
    get credentials() {
      if (!(this instanceof Navigator)) throw new TypeError('The Navigator.credentials getter can only be used on instances of Navigator');
      return container;
    },
  }, 'credentials');
  Object.defineProperty(Navigator.prototype, 'credentials', { get: credentials, enumerable: true, configurable: true });

  // Whether a frame's parent allows it a feature (WebKit enforces the Permissions Policy but lets
  // no script read it): each document's bridge answers its child frames from the frame element's
  // `allow` attribute; a frame asks its parent. A feature WebAuthn names defaults to 'self', so a
  // cross-origin frame is allowed one only by its parent's `allow` — `*`, 'src' (or no
  // allowlist), or the frame's origin. One level: the parent is taken to hold the feature itself.
  const ASK = 'authctl-frame-policy', ANSWER = 'authctl-frame-policy-answer';
  addEventListener('message', (event) => {
    const data = event.data;
    if (!data || data.channel !== ASK || typeof data.id !== 'string' || !event.source) return;
    const frame = Array.from(document.querySelectorAll('iframe, frame')).find((f) => f.contentWindow === event.source);
    event.source.postMessage({ channel: ANSWER, id: data.id, allow: frame ? frame.getAttribute('allow') || '' : null }, '*');
  });
  function allows(allow, feature) {
    for (const directive of allow.split(';')) {
      const [name, ...allowlist] = directive.trim().split(/\s+/);
      if (name !== feature) continue;
      return allowlist.length === 0 || allowlist.some((entry) => entry === '*' || entry === "'src'" || entry === location.origin);
    }
    return false;
  }
  const askParent = (feature) => new Promise((resolve) => {
    if (window === window.top) { resolve(true); return; }
    const id = crypto.randomUUID();
    const timer = setTimeout(() => { removeEventListener('message', onAnswer); resolve(false); }, 10000);
    function onAnswer(event) {
      const data = event.data;
      if (event.source !== window.parent || !data || data.channel !== ANSWER || data.id !== id) return;
      clearTimeout(timer);
      removeEventListener('message', onAnswer);
      resolve(typeof data.allow === 'string' && allows(data.allow, feature));
    }
    addEventListener('message', onAnswer);
    window.parent.postMessage({ channel: ASK, id }, '*');
  });
  Object.defineProperty(globalThis, Symbol.for('authctl.framePolicy'), { value: askParent });
})();

// ---- The bridge ----------------------------------------------------------------------------------
(() => {
  'use strict';
  const CONFIG = __AUTHCTL_CONFIG__;
  if (globalThis.__authctlBridge || typeof PublicKeyCredential === 'undefined' || !navigator.credentials) {
    return;  // injected twice, or not a secure context: the browser offers no WebAuthn here either
  }
  // This page — one document: a reload is a new page — and its conditional sign-in while one is
  // pending; authctl's own name for each error the bridge rejected with (docs/errors.md), kept
  // beside the error, which has the browser's shape and no member of authctl's.
  const PAGE = crypto.randomUUID();
  let autofillRequest = null;
  const problems = new WeakMap();
  Object.defineProperty(globalThis, '__authctlBridge', { value: Object.freeze({
    account: CONFIG.account, device: CONFIG.device, page: PAGE,
    get autofillRequest() { return autofillRequest; },
    errorName(error) { return problems.get(error) || null; },
  }) });

  const container = navigator.credentials;
  const nativeCreate = CredentialsContainer.prototype.create;
  const nativeGet = CredentialsContainer.prototype.get;
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
  // Whose words the browser's own bindings speak, which the bridge's TypeErrors follow: Gecko's
  // (Firefox: "'get rawId' called on an object that does not implement interface …") or Blink's
  // (Chromium: "Illegal invocation"), told apart by a member read on a stranger.
  const GECKO = (() => {
    try {
      const getter = (Object.getOwnPropertyDescriptor(PublicKeyCredential.prototype, 'rawId') || {}).get;
      if (getter) getter.call({});
    } catch (error) {
      return /does not implement interface/.test(error.message);
    }
    return false;
  })();
  // A TypeError as the browser throws one from its bindings: in Chromium its `message` an
  // enumerable own property, unlike a script's `new TypeError`; in Firefox as a script's.
  function typeError(message) {
    const error = new TypeError(message);
    if (!GECKO) Object.defineProperty(error, 'message', { enumerable: true });
    return error;
  }
  // WebIDL's conversion of the options' BufferSource members: in its order (a dictionary's own
  // members lexicographically, after those it inherits), in Chromium's words for the first that
  // fails — each dictionary read on the way named, then what is wrong.
  const NOT_BYTES = "The provided value is not of type '(ArrayBuffer or ArrayBufferView)'.";
  const REQUIRED = 'Required member is undefined.';
  function conversionError(call, path, problem) {
    if (GECKO) {
      // Firefox names the innermost member and its dictionary only.
      const [member, dictionary] = path[path.length - 1];
      const words = problem === REQUIRED ? `Missing required '${member}' member of ${dictionary}.`
        : problem === NOT_BYTES ? `'${member}' member of ${dictionary} could not be converted to any of: ArrayBufferView, ArrayBuffer.`
          : `'${member}' member of ${dictionary} can't be converted to a dictionary.`;
      return typeError(`CredentialsContainer.${call}: ${words}`);
    }
    const reads = path.map(([member, dictionary]) => `Failed to read the '${member}' property from '${dictionary}': `).join('');
    return typeError(`Failed to execute '${call}' on 'CredentialsContainer': ${reads}${problem}`);
  }
  function needBytes(value, call, path, required) {
    if (value === undefined) {
      if (required) throw conversionError(call, path, REQUIRED);
      return;
    }
    if (!isBufferSource(value)) throw conversionError(call, path, NOT_BYTES);
  }
  const isObject = (value) => value !== null && typeof value === 'object';
  function checkDescriptors(list, member, call, path) {
    for (const c of Array.isArray(list) ? list : []) {
      needBytes(isObject(c) ? c.id : undefined, call, [...path, [member, `PublicKeyCredential${call === 'create' ? 'Creation' : 'Request'}Options`],
        ['id', 'PublicKeyCredentialDescriptor']], true);
    }
  }
  // The extension inputs WebIDL types as BufferSource: a string there (base64url a page meant as
  // bytes) is a TypeError in the browser, so it is one here too, before anything is sent.
  function checkExtensionBuffers(extensions, call, path) {
    if (!isObject(extensions)) return;
    const inputs = [...path, ['extensions', `PublicKeyCredential${call === 'create' ? 'Creation' : 'Request'}Options`]];
    needBytes(extensions.credBlob, call, [...inputs, ['credBlob', 'AuthenticationExtensionsClientInputs']]);
    if (isObject(extensions.largeBlob)) {
      needBytes(extensions.largeBlob.write, call, [...inputs, ['largeBlob', 'AuthenticationExtensionsClientInputs'],
        ['write', 'AuthenticationExtensionsLargeBlobInputs']]);
    }
    const prf = extensions.prf;
    if (!isObject(prf)) return;
    const prfPath = [...inputs, ['prf', 'AuthenticationExtensionsClientInputs']];
    const values = (v, member) => {
      const at = [...prfPath, [member, 'AuthenticationExtensionsPRFInputs']];
      needBytes(isObject(v) ? v.first : undefined, call, [...at, ['first', 'AuthenticationExtensionsPRFValues']], true);
      if (isObject(v)) needBytes(v.second, call, [...at, ['second', 'AuthenticationExtensionsPRFValues']]);
    };
    if (prf.eval !== undefined) values(prf.eval, 'eval');
    if (isObject(prf.evalByCredential)) for (const v of Object.values(prf.evalByCredential)) values(v, 'evalByCredential');
  }
  function checkCreation(options) {
    const path = [['publicKey', 'CredentialCreationOptions']];
    if (!isObject(options)) throw conversionError('create', path, "The provided value is not of type 'PublicKeyCredentialCreationOptions'.");
    const dictionary = 'PublicKeyCredentialCreationOptions';
    needBytes(options.challenge, 'create', [...path, ['challenge', dictionary]], true);
    checkDescriptors(options.excludeCredentials, 'excludeCredentials', 'create', path);
    checkExtensionBuffers(options.extensions, 'create', path);
    if (options.user === undefined) throw conversionError('create', [...path, ['user', dictionary]], REQUIRED);
    needBytes(isObject(options.user) ? options.user.id : undefined, 'create', [...path, ['user', dictionary], ['id', 'PublicKeyCredentialUserEntity']], true);
  }
  function checkRequest(options) {
    const path = [['publicKey', 'CredentialRequestOptions']];
    if (!isObject(options)) throw conversionError('get', path, "The provided value is not of type 'PublicKeyCredentialRequestOptions'.");
    checkDescriptors(options.allowCredentials, 'allowCredentials', 'get', path);
    needBytes(options.challenge, 'get', [...path, ['challenge', 'PublicKeyCredentialRequestOptions']], true);
    checkExtensionBuffers(options.extensions, 'get', path);
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
    if (policy && typeof policy.allowsFeature === 'function') return policy.allowsFeature(feature);
    // No Permissions Policy a script can read (WebKit): the parent's bridge says (section above).
    const askParent = globalThis[Symbol.for('authctl.framePolicy')];
    return askParent ? askParent(feature) : true;
  }

  // A problem answer as the error the browser would reject with; authctl's own name for it
  // (docs/errors.md) is `__authctlBridge.errorName(error)`, for tests and debugging.
  function errorOf(problem, status) {
    const detail = (problem && (problem.detail || problem.title)) || `authctl serve answered ${status}`;
    const name = problem && problem.domException;
    let error;
    if (name === 'TypeError') error = typeError(detail);
    else if (name) error = new DOMException(detail, name);
    else {
      console.error(`authctl page bridge: ${detail}`);
      error = new DOMException(`authctl page bridge: ${detail}`, 'NotAllowedError');
    }
    if (problem && problem.name) problems.set(error, problem.name);
    return error;
  }
  // A conditional sign-in that is over for this page without an outcome (`410`: another page's
  // request took the autofill list, or this page withdrew it).
  const GONE = Symbol('gone');
  // Whether the page is going away: Firefox fails the fetches it has in flight as the navigation
  // begins (after beforeunload, before pagehide), which says nothing of the server — the page
  // gets its error all the same, and the console no complaint.
  let leaving = false;
  addEventListener('beforeunload', () => { leaving = true; }, { capture: true });
  addEventListener('pageshow', () => { leaving = false; }, { capture: true });
  // The errors of requests that never reached the server or lost it on the way.
  const unreached = new WeakSet();
  async function call(method, path, body, signal, keepalive = false) {
    let response;
    try {
      response = await fetch(base + path, {
        method, signal, keepalive, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer',
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
      if (!leaving) console.error(`authctl page bridge: ${why}`);
      const failure = new DOMException(why, 'NotAllowedError');
      unreached.add(failure);
      throw failure;
    }
    const text = await response.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch { json = null; }
    if (response.status === 410) throw GONE;
    if (!response.ok) throw errorOf(json, response.status);
    return json;
  }

  // The objects a browser hands the page, of its shape (WebIDL §3.7): no own properties; each
  // member an attribute's getter or an operation on the interface's prototype, with the browser's
  // property attributes, name and length — so that a page (or its library) may assign
  // `credential.toJSON`, spread, clone the ArrayBuffers or walk the members as it does natively.
  // Each object is a Proxy around a plain one, so that structuredClone and postMessage refuse it
  // (DataCloneError) as they refuse a platform object; what it holds is in `slots`.
  const slots = new WeakMap();
  function platformObject(prototype, members) {
    const object = new Proxy(Object.create(prototype), {});
    slots.set(object, members);
    return object;
  }
  // An operation of `target` (a prototype, or an interface object for a static one) answered by
  // `body(this, args)`: a method — no prototype, not a constructor — of the native one's name and
  // length, and its property attributes (an operation's, writable, enumerable, configurable, where
  // the browser has none).
  function operation(target, name, length, body) {
    const native = Object.getOwnPropertyDescriptor(target, name);
    const method = { [name](...args) { return body(this, args); } }[name];
    Object.defineProperty(method, 'length', { value: native ? native.value.length : length });
    Object.defineProperty(target, name, { value: method, writable: native ? native.writable : true,
      enumerable: native ? native.enumerable : true, configurable: native ? native.configurable : true });
    return native && native.value;
  }
  // A prototype's operation or attribute that answers from the slots of an object the bridge
  // made, and is the browser's own for any other (which says "Illegal invocation" to a stranger).
  const illegal = () => { throw new TypeError('Illegal invocation'); };
  function memberOperation(prototype, name, answer) {
    const native = operation(prototype, name, 0, (self, args) => {
      const members = slots.get(self);
      return members ? answer(members) : Reflect.apply(native || illegal, self, args);
    });
  }
  function attribute(prototype, name) {
    const native = Object.getOwnPropertyDescriptor(prototype, name) || { enumerable: true, configurable: true };
    const { get } = Object.getOwnPropertyDescriptor({
      get [name]() {
        const members = slots.get(this);
        return members ? members[name] : Reflect.apply(native.get || illegal, this, []);
      },
    }, name);
    Object.defineProperty(prototype, name, { get, set: native.set, enumerable: native.enumerable, configurable: native.configurable });
  }
  // A dictionary as the browser converts one to JavaScript: a new object at every call, members
  // in lexicographic order; its ArrayBuffers the same objects each time — in Firefox new ones,
  // as Firefox's getAuthenticatorData() and getPublicKey() give a new ArrayBuffer at every call.
  const fresh = (buffer) => (GECKO && buffer instanceof ArrayBuffer ? buffer.slice(0) : buffer);
  function dictionary(value) {
    if (value instanceof ArrayBuffer) return fresh(value);
    if (Array.isArray(value)) return value.map(dictionary);
    if (value === null || typeof value !== 'object') return value;
    const out = {};
    for (const key of Object.keys(value).sort()) out[key] = dictionary(value[key]);
    return out;
  }
  for (const name of ['id', 'type']) attribute(Credential.prototype, name);
  for (const name of ['rawId', 'response', 'authenticatorAttachment']) attribute(PublicKeyCredential.prototype, name);
  memberOperation(PublicKeyCredential.prototype, 'getClientExtensionResults', (m) => dictionary(m.extensions));
  memberOperation(PublicKeyCredential.prototype, 'toJSON', (m) => dictionary(m.json));
  attribute(AuthenticatorResponse.prototype, 'clientDataJSON');
  attribute(AuthenticatorAttestationResponse.prototype, 'attestationObject');
  memberOperation(AuthenticatorAttestationResponse.prototype, 'getTransports', (m) => [...m.transports]);
  memberOperation(AuthenticatorAttestationResponse.prototype, 'getAuthenticatorData', (m) => fresh(m.authenticatorDataBuffer));
  memberOperation(AuthenticatorAttestationResponse.prototype, 'getPublicKey', (m) => fresh(m.publicKey));
  memberOperation(AuthenticatorAttestationResponse.prototype, 'getPublicKeyAlgorithm', (m) => m.publicKeyAlgorithm);
  for (const name of ['authenticatorData', 'signature', 'userHandle']) attribute(AuthenticatorAssertionResponse.prototype, name);

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
  const optional = (text) => (text === undefined || text === null ? null : unb64url(text));
  function credentialOf(answer, made) {
    // What the server's store checks found is the test's to read, on the console: not the page's
    // credential, whose toJSON() is the browser's members alone.
    const { warnings, ...json } = answer;
    for (const warning of warnings || []) console.warn(`authctl page bridge: warning: ${warning}`);
    const r = json.response;
    const response = made
      ? platformObject(AuthenticatorAttestationResponse.prototype, {
        clientDataJSON: unb64url(r.clientDataJSON), attestationObject: unb64url(r.attestationObject),
        authenticatorDataBuffer: unb64url(r.authenticatorData), publicKey: optional(r.publicKey),
        publicKeyAlgorithm: r.publicKeyAlgorithm, transports: [...(r.transports || [])],
      })
      : platformObject(AuthenticatorAssertionResponse.prototype, {
        clientDataJSON: unb64url(r.clientDataJSON), authenticatorData: unb64url(r.authenticatorData),
        signature: unb64url(r.signature), userHandle: optional(r.userHandle),
      });
    return platformObject(PublicKeyCredential.prototype, {
      id: json.id, type: json.type || 'public-key', rawId: unb64url(json.rawId || json.id),
      authenticatorAttachment: json.authenticatorAttachment ?? null, response,
      extensions: extensionResults(json.clientExtensionResults), json: structuredClone(json),
    });
  }

  // A conditional sign-in waits on the server until the test picks from the autofill list. It is
  // this page's (its request names the page, its id and URL: GET …/autofill shows them): the page
  // withdraws it when it aborts it or goes away (pagehide: a navigation, a reload, the tab
  // closed), before the next one begins; one left pending by a page the bridge never heard from
  // again is ended by the server when another page's request begins.
  const withdrawal = (id, keepalive) => call('DELETE', `/autofill?request=${encodeURIComponent(id)}`, undefined, undefined, keepalive)
    .catch(() => {});
  let ending = Promise.resolve();
  const withdraw = (id) => {
    ending = ending.then(() => withdrawal(id, false));
    return ending;
  };
  // Sent at once, outliving the page (keepalive): a page that goes away waits for nothing.
  addEventListener('pagehide', () => {
    leaving = true;
    if (autofillRequest) withdrawal(autofillRequest, true);
  }, { capture: true });
  // Settles only by the page's abort: the conditional request the browser keeps open for a page
  // whose autofill list another page has.
  const untilAborted = (signal) => new Promise((resolve, reject) => {
    if (signal) signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

  async function ceremony(kind, publicKey, mediation, uiMode, signal) {
    if (signal && signal.aborted) throw signal.reason;
    if (kind === 'register') checkCreation(publicKey); else checkRequest(publicKey);
    const where = caller();
    const body = { options: jsonOf(publicKey), origin: where.origin };
    if (where.topOrigin) {
      body.topOrigin = where.topOrigin;
      body.framePermission = await frameAllows(kind === 'register' ? 'publickey-credentials-create' : 'publickey-credentials-get');
    }
    if (mediation !== undefined) body.mediation = mediation;
    if (uiMode !== undefined) body.uiMode = String(uiMode);
    if (navigator.userActivation) body.userActivation = navigator.userActivation.isActive;
    const conditional = kind === 'sign' && mediation === 'conditional';
    const id = conditional ? crypto.randomUUID() : null;
    if (conditional) {
      body.request = { id, page: PAGE, url: location.href.slice(0, 4096) };
      await ending;
      if (signal && signal.aborted) throw signal.reason;  // aborted while an earlier one ended
      autofillRequest = id;
    }
    const controller = new AbortController();
    const onAbort = () => {
      controller.abort(signal.reason);
      if (conditional) withdraw(id);
    };
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    try {
      let json;
      try {
        json = await call('POST', `/${kind}`, body, controller.signal);
      } catch (error) {
        // A conditional request whose connection failed may still be pending on the server:
        // withdrawn here, outliving the page — Firefox and WebKit end a page's fetches as it
        // navigates away, before pagehide would withdraw it.
        if (conditional && unreached.has(error)) withdrawal(id, true);
        if (error !== GONE) throw error;
        if (autofillRequest === id) autofillRequest = null;
        return await untilAborted(signal);
      }
      if (signal && signal.aborted) throw signal.reason;
      return credentialOf(json, kind === 'register');
    } finally {
      if (autofillRequest === id) autofillRequest = null;
      if (signal) signal.removeEventListener('abort', onAbort);
    }
  }

  // The availability checks never reject in a browser: a server that cannot answer is "no".
  const capabilities = () => call('GET', '/capabilities').catch((error) => {
    console.error(`authctl page bridge: ${error.message}`);
    return { capabilities: {}, isUserVerifyingPlatformAuthenticatorAvailable: false, isConditionalMediationAvailable: false };
  });

  // WebIDL's enum conversion of CredentialCreationOptions / CredentialRequestOptions members: a
  // value that is not one of the enum's is a TypeError before anything else happens.
  function enumMember(value, allowed, member, type, call) {
    if (value === undefined) return undefined;
    const text = String(value);
    if (!allowed.includes(text)) {
      if (GECKO) {
        throw typeError(`CredentialsContainer.${call}: '${text}' (value of '${member}' member of `
          + `Credential${call === 'create' ? 'Creation' : 'Request'}Options) is not a valid value for enumeration ${type}.`);
      }
      throw typeError(`Failed to execute '${call}' on 'CredentialsContainer': Failed to read the '${member}' property from `
        + `'Credential${call === 'create' ? 'Creation' : 'Request'}Options': The provided value '${text}' is not a valid enum value of type ${type}.`);
    }
    return text;
  }
  const MEDIATIONS = ['silent', 'optional', 'conditional', 'required'];
  // create() and get() stay operations of CredentialsContainer.prototype; a call that is not for
  // `publicKey`, or not on the page's own container, is the browser's.
  operation(CredentialsContainer.prototype, 'create', 0, (self, args) => {
    const [options] = args;
    try {
      if (self !== container || !options || options.publicKey === undefined) return Reflect.apply(nativeCreate, self, args);
      const mediation = enumMember(options.mediation, MEDIATIONS, 'mediation', 'CredentialMediationRequirement', 'create');
      return ceremony('register', options.publicKey, mediation, undefined, options.signal);
    } catch (error) {
      return Promise.reject(error);
    }
  });
  operation(CredentialsContainer.prototype, 'get', 0, (self, args) => {
    const [options] = args;
    try {
      if (self !== container || !options || options.publicKey === undefined) return Reflect.apply(nativeGet, self, args);
      const mediation = enumMember(options.mediation, MEDIATIONS, 'mediation', 'CredentialMediationRequirement', 'get');
      // Firefox has no uiMode: a member its conversion does not read.
      const uiMode = GECKO ? undefined : enumMember(options.uiMode, ['immediate', 'passive'], 'uiMode', 'CredentialUiModeRequirement', 'get');
      return ceremony('sign', options.publicKey, mediation, uiMode, options.signal);
    } catch (error) {
      return Promise.reject(error);
    }
  });
  operation(PublicKeyCredential, 'isUserVerifyingPlatformAuthenticatorAvailable', 0,
    () => capabilities().then((answer) => answer.isUserVerifyingPlatformAuthenticatorAvailable));
  // PublicKeyCredential's own static (Chromium, Firefox), or Credential's where only it has one (WebKit).
  const conditionalHolder = Object.getOwnPropertyDescriptor(PublicKeyCredential, 'isConditionalMediationAvailable')
    || !Object.getOwnPropertyDescriptor(Credential, 'isConditionalMediationAvailable') ? PublicKeyCredential : Credential;
  operation(conditionalHolder, 'isConditionalMediationAvailable', 0, () => capabilities().then((answer) => answer.isConditionalMediationAvailable));
  // The browser's answer has its own keys — Chromium's extension:appid, extension:payment and no
  // ambientGet; Firefox's extension:hmacCreateSecret and no immediateGet — so the keys are its own,
  // each valued as the server values it where the server has that key, an extension's input
  // member (Chromium lists them as keys) as the server values its extension, else the browser's
  // own (docs/browser.md, "getClientCapabilities()"). A browser without one (the bridge supplies
  // PublicKeyCredential there) gets the server's.
  const INPUT_OF = { 'extension:credentialProtectionPolicy': 'extension:credProtect',
    'extension:enforceCredentialProtectionPolicy': 'extension:credProtect', 'extension:getCredBlob': 'extension:credBlob' };
  const nativeCapabilities = operation(PublicKeyCredential, 'getClientCapabilities', 0, () => capabilities().then(async (answer) => {
    if (!nativeCapabilities) return answer.capabilities;
    const own = await Reflect.apply(nativeCapabilities, PublicKeyCredential, []).catch(() => null);
    // No answer, or none with a key (the placeholder the section above supplies where the engine
    // has no WebAuthn): the server's keys.
    if (!own || Object.keys(own).length === 0) return answer.capabilities;
    const server = answer.capabilities;
    return Object.fromEntries(Object.keys(own).map((key) => {
      const says = key in server ? key : INPUT_OF[key];
      return [key, says !== undefined && says in server ? server[says] : own[key]];
    }));
  }));
  for (const signal of ['unknownCredential', 'allAcceptedCredentials', 'currentUserDetails']) {
    const name = `signal${signal[0].toUpperCase()}${signal.slice(1)}`;
    operation(PublicKeyCredential, name, 1, async (self, [options]) => {
      if (options === null || typeof options !== 'object') throw typeError(`Failed to execute '${name}' on 'PublicKeyCredential': the options are not an object.`);
      await call('POST', `/signals/${signal}`, { options: jsonOf(options), origin: caller().origin });
      return undefined;
    });
  }

  // The JSON helpers, for a browser that lacks them (each BufferSource member from base64url).
  const fromB64 = (value) => (typeof value === 'string' ? unb64url(value) : value);
  const credentialList = (list) => list && list.map((c) => ({ ...c, id: fromB64(c.id) }));
  if (typeof PublicKeyCredential.parseCreationOptionsFromJSON !== 'function') {
    operation(PublicKeyCredential, 'parseCreationOptionsFromJSON', 1, (self, [json]) => ({ ...json, challenge: fromB64(json.challenge),
      user: { ...json.user, id: fromB64(json.user.id) }, excludeCredentials: credentialList(json.excludeCredentials) }));
  }
  if (typeof PublicKeyCredential.parseRequestOptionsFromJSON !== 'function') {
    operation(PublicKeyCredential, 'parseRequestOptionsFromJSON', 1, (self, [json]) => ({ ...json, challenge: fromB64(json.challenge),
      allowCredentials: credentialList(json.allowCredentials) }));
  }
})();
