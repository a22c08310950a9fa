// What a page — and the client library it uses — can see of the objects WebAuthn hands it, in a
// form two tabs' answers can be compared by: the browser's own objects (a tab answered by a CDP
// virtual authenticator) and the page bridge's. Values that differ between two authenticators
// (ids, bytes, signatures) are reduced to their kind; everything else — prototype chains, each
// property's kind and attributes, method names and lengths, Symbol.toStringTag, whether a member
// is the same object at every read, what spreading, cloning, assigning or walking the members
// does — is kept as it is. (Written for these tests; no library's code is copied here.)
'use strict';

// A function as a page can tell it apart: name, length, whether it constructs, its prototype.
function functionShape(f) {
  let constructs = true;
  try { Reflect.construct(String, [], f); } catch { constructs = false; }
  return { name: f.name, length: f.length, constructs, ownPrototype: Object.hasOwn(f, 'prototype'),
           inherits: Object.getPrototypeOf(f) === Function.prototype ? 'Function.prototype' : Object.prototype.toString.call(Object.getPrototypeOf(f)) };
}

function ownProperties(object) {
  return Reflect.ownKeys(object).map((key) => {
    const d = Object.getOwnPropertyDescriptor(object, key);
    const entry = { key: String(key), enumerable: d.enumerable, configurable: d.configurable };
    if ('value' in d) {
      entry.kind = 'data';
      entry.writable = d.writable;
      entry.value = typeof d.value === 'function' ? functionShape(d.value)
        : (d.value !== null && typeof d.value === 'object') ? Object.prototype.toString.call(d.value) : d.value;
    } else {
      entry.kind = 'accessor';
      entry.get = d.get ? functionShape(d.get) : null;
      entry.set = d.set ? functionShape(d.set) : null;
    }
    return entry;
  });
}

// Every object of the prototype chain up to Object.prototype, with its own properties.
function chain(object) {
  const levels = [];
  for (let level = object; level !== null && level !== Object.prototype; level = Object.getPrototypeOf(level)) {
    levels.push({ tag: Object.prototype.toString.call(level), own: ownProperties(level) });
  }
  return levels;
}

// A value's kind: its type, an ArrayBuffer as such, a dictionary as its members in order, an
// array as the kinds it holds (how many is the authenticator's: its transports).
function kind(value) {
  if (value === null) return 'null';
  if (value instanceof ArrayBuffer) return 'ArrayBuffer';
  if (Array.isArray(value)) return ['array', ...new Set(value.map((v) => JSON.stringify(kind(v))))];
  if (typeof value === 'object') {
    return { tag: Object.prototype.toString.call(value), prototype: Object.getPrototypeOf(value) === Object.prototype ? 'Object.prototype' : 'other',
             members: Object.entries(value).map(([key, member]) => [key, kind(member)]) };
  }
  return typeof value;
}

const encoded = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
// The client extension results as their JSON form (each ArrayBuffer as base64url).
function jsonForm(value) {
  if (value instanceof ArrayBuffer) return encoded(value);
  if (Array.isArray(value)) return value.map(jsonForm);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonForm(v)]));
  return value;
}
const sameJSON = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// What a call does: its value's kind, or the name of what it threw.
function attempt(call) {
  try {
    return { value: kind(call()) };
  } catch (error) {
    return { threw: error && error.name };
  }
}

// Each member read as a page reads it: its kind, and whether two reads give the same object.
function members(credential) {
  const c = credential, r = credential.response;
  const out = {
    id: kind(c.id), type: c.type, authenticatorAttachment: c.authenticatorAttachment,
    rawId: kind(c.rawId), rawIdIsId: encoded(c.rawId) === c.id, sameRawId: c.rawId === c.rawId, sameResponse: c.response === c.response,
    clientDataJSON: kind(r.clientDataJSON), sameClientDataJSON: r.clientDataJSON === r.clientDataJSON,
    extensions: kind(c.getClientExtensionResults()), sameExtensions: c.getClientExtensionResults() === c.getClientExtensionResults(),
    json: kind(c.toJSON()), sameJSON: c.toJSON() === c.toJSON(),
    // what the page reads is what it posts
    extensionsAreTheJSONs: sameJSON(jsonForm(c.getClientExtensionResults()), c.toJSON().clientExtensionResults),
  };
  const prf = c.getClientExtensionResults().prf;
  if (prf && prf.results) out.samePRFOutput = prf.results.first === c.getClientExtensionResults().prf.results.first;
  if (r instanceof AuthenticatorAttestationResponse) {
    Object.assign(out, {
      attestationObject: kind(r.attestationObject), sameAttestationObject: r.attestationObject === r.attestationObject,
      transports: kind(r.getTransports()), sameTransports: r.getTransports() === r.getTransports(),
      authenticatorData: kind(r.getAuthenticatorData()), sameAuthenticatorData: r.getAuthenticatorData() === r.getAuthenticatorData(),
      publicKey: kind(r.getPublicKey()), samePublicKey: r.getPublicKey() === r.getPublicKey(),
      publicKeyAlgorithm: kind(r.getPublicKeyAlgorithm()),  // which one is the authenticator's choice
    });
  } else {
    Object.assign(out, {
      authenticatorData: kind(r.authenticatorData), sameAuthenticatorData: r.authenticatorData === r.authenticatorData,
      signature: kind(r.signature), sameSignature: r.signature === r.signature,
      userHandle: kind(r.userHandle), sameUserHandle: r.userHandle === r.userHandle,
    });
  }
  return out;
}

// What client libraries do with the objects: walk, spread, copy, stringify, clone, wrap, borrow
// a method, assign their own toJSON (as GitHub's webauthn-json ponyfill does), define a member,
// freeze. The mutations come last: they change the object.
function libraryUses(credential) {
  const forIn = (object) => { const keys = []; for (const key in object) keys.push(key); return keys; };
  const forwarding = new Proxy(credential, { get: (target, key) => {
    const value = Reflect.get(target, key);
    return typeof value === 'function' ? value.bind(target) : value;
  } });
  const uses = {
    keys: Object.keys(credential), ownNames: Object.getOwnPropertyNames(credential), ownSymbols: Object.getOwnPropertySymbols(credential).map(String),
    forIn: forIn(credential), responseForIn: forIn(credential.response), responseKeys: Object.keys(credential.response),
    spread: kind({ ...credential }), assigned: kind(Object.assign({}, credential)), entries: Object.entries(credential).length,
    stringified: kind(JSON.parse(JSON.stringify(credential))), stringifiedIsToJSON: JSON.stringify(credential) === JSON.stringify(credential.toJSON()),
    tag: Object.prototype.toString.call(credential), responseTag: Object.prototype.toString.call(credential.response), text: String(credential),
    instanceOf: [credential instanceof PublicKeyCredential, credential instanceof Credential,
                 credential.response instanceof AuthenticatorResponse, credential.response instanceof AuthenticatorAttestationResponse,
                 credential.response instanceof AuthenticatorAssertionResponse],
    prototypeIs: Object.getPrototypeOf(credential) === PublicKeyCredential.prototype,
    hasToJSON: 'toJSON' in credential, ownToJSON: Object.hasOwn(credential, 'toJSON'),
    extensible: Object.isExtensible(credential), frozen: Object.isFrozen(credential),
    cloneCredential: attempt(() => structuredClone(credential)),
    cloneResponse: attempt(() => structuredClone(credential.response)),
    cloneRawId: attempt(() => structuredClone(credential.rawId).byteLength === credential.rawId.byteLength),
    cloneClientDataJSON: attempt(() => structuredClone(credential.response.clientDataJSON)),
    cloneExtensions: attempt(() => structuredClone(credential.getClientExtensionResults())),
    cloneJSON: attempt(() => structuredClone(credential.toJSON())),
    inheritedRead: attempt(() => Object.create(credential).id),
    transparentProxyRead: attempt(() => new Proxy(credential, {}).rawId),
    forwardingProxyRead: attempt(() => [forwarding.id, forwarding.rawId, forwarding.toJSON(), forwarding.getClientExtensionResults()]),
    borrowedMethod: attempt(() => { const { getClientExtensionResults } = credential; return getClientExtensionResults(); }),
    calledOnPrototype: attempt(() => PublicKeyCredential.prototype.toJSON.call(credential)),
    calledOnStranger: attempt(() => PublicKeyCredential.prototype.toJSON.call({})),
    getterOnStranger: attempt(() => Object.getOwnPropertyDescriptor(PublicKeyCredential.prototype, 'rawId').get.call({})),
    attributeAssigned: attempt(() => { credential.id = 'replaced'; return credential.id; }),
  };
  uses.toJSONAssigned = attempt(() => { credential.toJSON = () => ({ library: true }); return JSON.parse(JSON.stringify(credential)); });
  uses.ownAfterAssigning = Object.getOwnPropertyNames(credential);
  uses.toJSONDeleted = attempt(() => { delete credential.toJSON; return Object.keys(credential.toJSON()); });
  uses.memberDefined = attempt(() => { Object.defineProperty(credential, 'id', { value: 'defined', configurable: true }); return credential.id; });
  uses.frozenThenAssigned = attempt(() => { Object.freeze(credential); credential.toJSON = () => ({}); return 'assigned'; });
  return uses;
}

function errorShape(error) {
  return { chain: chain(error), name: error.name, messageKind: typeof error.message, code: error.code,
           isDOMException: error instanceof DOMException, isError: error instanceof Error, tag: Object.prototype.toString.call(error) };
}

// A sign-up and a sign-in, and two refusals, as a page meets them; everything above of each.
window.fingerprint = async function (creationJSON, requestJSON) {
  const made = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(creationJSON) });
  const request = PublicKeyCredential.parseRequestOptionsFromJSON({ ...requestJSON, allowCredentials: [{ type: 'public-key', id: made.id }] });
  const signed = await navigator.credentials.get({ publicKey: request });
  const refusal = async (publicKey) => {
    try {
      await navigator.credentials.create({ publicKey });
      return null;
    } catch (error) {
      return errorShape(error);
    }
  };
  const excluded = await refusal({ ...PublicKeyCredential.parseCreationOptionsFromJSON(creationJSON),
                                   excludeCredentials: [{ type: 'public-key', id: made.rawId }] });
  const notBytes = await refusal({ ...PublicKeyCredential.parseCreationOptionsFromJSON(creationJSON), challenge: 'not bytes' });
  return {
    interfaces: { container: chain(navigator.credentials), PublicKeyCredential: ownProperties(PublicKeyCredential),
                  Credential: ownProperties(Credential) },
    registration: { chain: chain(made), response: chain(made.response), members: members(made), uses: libraryUses(made) },
    assertion: { chain: chain(signed), response: chain(signed.response), members: members(signed), uses: libraryUses(signed) },
    errors: { excluded, notBytes },
  };
};

// What a page sees of WebAuthn before any authenticator answers: the interfaces — their
// prototypes' properties, in order, with their attributes, what `for…in` walks, what a member
// read on something else throws, and each error the options' conversion throws, its words
// included. For a browser whose own WebAuthn has no authenticator in a test (Firefox over WebDriver
// BiDi has no virtual authenticator), the part of its objects that can be compared.
const INTERFACES = ['Credential', 'PublicKeyCredential', 'AuthenticatorResponse', 'AuthenticatorAttestationResponse',
                    'AuthenticatorAssertionResponse', 'CredentialsContainer'];
function refusalShape(error) {
  return { name: error.name, message: error.message, isDOMException: error instanceof DOMException,
           own: Reflect.ownKeys(error).map((key) => [String(key), Object.getOwnPropertyDescriptor(error, key).enumerable]) };
}
window.interfaceShape = async function () {
  const forIn = (prototype) => { const keys = []; for (const key in Object.create(prototype)) keys.push(key); return keys; };
  const stranger = (call) => { try { call(); return null; } catch (error) { return refusalShape(error); } };
  const refusal = async (kind, options) => {
    try {
      await navigator.credentials[kind](options);
      return null;
    } catch (error) {
      return refusalShape(error);
    }
  };
  const user = { id: new Uint8Array(1), name: 'a', displayName: 'A' };
  const creation = (publicKey) => ({ publicKey: { challenge: new Uint8Array(16), rp: { name: 'x' }, user,
                                                  pubKeyCredParams: [{ type: 'public-key', alg: -7 }], ...publicKey } });
  const aborted = new AbortController();
  aborted.abort();
  return {
    capabilityKeys: Object.keys(await PublicKeyCredential.getClientCapabilities()),
    interfaces: Object.fromEntries(INTERFACES.map((name) => [name, { static: ownProperties(globalThis[name]),
                                                                      prototype: ownProperties(globalThis[name].prototype) }])),
    forIn: Object.fromEntries(INTERFACES.slice(1, -1).map((name) => [name, forIn(globalThis[name].prototype)])),
    container: chain(navigator.credentials),
    strangers: {
      getter: stranger(() => Object.getOwnPropertyDescriptor(PublicKeyCredential.prototype, 'rawId').get.call({})),
      operation: stranger(() => PublicKeyCredential.prototype.toJSON.call({})),
      responseOperation: stranger(() => AuthenticatorAttestationResponse.prototype.getTransports.call({})),
    },
    refusals: {
      challengeNotBytes: await refusal('create', creation({ challenge: 'not bytes' })),
      challengeMissing: await refusal('create', creation({ challenge: undefined })),
      userMissing: await refusal('create', creation({ user: undefined })),
      userIdNotBytes: await refusal('create', creation({ user: { ...user, id: 'not bytes' } })),
      excludedIdNotBytes: await refusal('create', creation({ excludeCredentials: [{ type: 'public-key', id: 'AAAA' }] })),
      publicKeyNotObject: await refusal('create', { publicKey: 5 }),
      getChallengeNotBytes: await refusal('get', { publicKey: { challenge: 'not bytes' } }),
      getChallengeMissing: await refusal('get', { publicKey: {} }),
      allowedIdNotBytes: await refusal('get', { publicKey: { challenge: new Uint8Array(16), allowCredentials: [{ type: 'public-key', id: 'AAAA' }] } }),
      prfNotBytes: await refusal('get', { publicKey: { challenge: new Uint8Array(16), extensions: { prf: { eval: { first: 'AAAA' } } } } }),
      largeBlobNotBytes: await refusal('get', { publicKey: { challenge: new Uint8Array(16), extensions: { largeBlob: { write: 'AAAA' } } } }),
      mediationNotEnum: await refusal('get', { mediation: 'bogus', publicKey: { challenge: new Uint8Array(16) } }),
      aborted: await refusal('get', { signal: aborted.signal, publicKey: { challenge: new Uint8Array(16) } }),
    },
  };
};
