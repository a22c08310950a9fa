// A page that checks every member a browser's credential objects offer, as an RP's front end
// might: instanceof, ArrayBuffers, getters, toJSON(); and the signature verified in the page with
// WebCrypto, from the SPKI getPublicKey() gave. The test reads what it returns and has
// py_webauthn verify the toJSON() forms.
'use strict';

const b64url = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const same = (a, b) => b64url(a) === b64url(b);

// An ECDSA signature as WebCrypto wants it (r || s, 32 bytes each) from its DER form.
function rawSignature(der) {
  const bytes = new Uint8Array(der);
  let offset = 2;
  const part = () => {
    const length = bytes[offset + 1];
    let value = bytes.slice(offset + 2, offset + 2 + length);
    offset += 2 + length;
    while (value.length > 32 && value[0] === 0) value = value.slice(1);
    const out = new Uint8Array(32);
    out.set(value, 32 - value.length);
    return out;
  };
  const r = part(), s = part();
  const raw = new Uint8Array(64);
  raw.set(r);
  raw.set(s, 32);
  return raw;
}

window.register = async function (creationJSON) {
  const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(creationJSON);
  const credential = await navigator.credentials.create({ publicKey });
  const response = credential.response;
  const json = credential.toJSON();
  const clientData = JSON.parse(new TextDecoder().decode(response.clientDataJSON));
  return {
    json,
    clientData,
    checks: {
      isPublicKeyCredential: credential instanceof PublicKeyCredential,
      isCredential: credential instanceof Credential,
      isAttestationResponse: response instanceof AuthenticatorAttestationResponse,
      isAuthenticatorResponse: response instanceof AuthenticatorResponse,
      rawIdIsArrayBuffer: credential.rawId instanceof ArrayBuffer,
      idIsRawId: credential.id === b64url(credential.rawId),
      type: credential.type,
      attachment: credential.authenticatorAttachment,
      clientDataIsArrayBuffer: response.clientDataJSON instanceof ArrayBuffer,
      attestationObjectIsArrayBuffer: response.attestationObject instanceof ArrayBuffer,
      transports: response.getTransports(),
      authenticatorDataMatchesJSON: same(response.getAuthenticatorData(), Uint8Array.from(atob(json.response.authenticatorData.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0))),
      publicKeyAlgorithm: response.getPublicKeyAlgorithm(),
      publicKeyImports: await crypto.subtle.importKey('spki', response.getPublicKey(), { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify'])
        .then(() => true, () => false),
      extensionResults: credential.getClientExtensionResults(),
      jsonMembers: Object.keys(json).sort(),
    },
    publicKey: b64url(response.getPublicKey()),
  };
};

window.signIn = async function (requestJSON, publicKeySPKI) {
  const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(requestJSON);
  const credential = await navigator.credentials.get({ publicKey });
  const response = credential.response;
  const key = await crypto.subtle.importKey('spki', Uint8Array.from(atob(publicKeySPKI.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0)),
    { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
  const signed = new Uint8Array(response.authenticatorData.byteLength + 32);
  signed.set(new Uint8Array(response.authenticatorData));
  signed.set(new Uint8Array(await crypto.subtle.digest('SHA-256', response.clientDataJSON)), response.authenticatorData.byteLength);
  return {
    json: credential.toJSON(),
    clientData: JSON.parse(new TextDecoder().decode(response.clientDataJSON)),
    checks: {
      isPublicKeyCredential: credential instanceof PublicKeyCredential,
      isAssertionResponse: response instanceof AuthenticatorAssertionResponse,
      signatureIsArrayBuffer: response.signature instanceof ArrayBuffer,
      userHandle: response.userHandle === null ? null : new TextDecoder().decode(response.userHandle),
      signatureVerifies: await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, rawSignature(response.signature), signed),
      attachment: credential.authenticatorAttachment,
    },
  };
};

window.availability = async function () {
  return {
    uvpaa: await PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable(),
    conditional: await PublicKeyCredential.isConditionalMediationAvailable(),
    capabilities: await PublicKeyCredential.getClientCapabilities(),
  };
};

window.signal = async function (name, options) {
  try {
    return { outcome: await PublicKeyCredential[name](options) === undefined ? 'ok' : 'value' };
  } catch (error) {
    return { outcome: error.name, message: error.message };
  }
};

// A call that is expected to fail: its error's name.
window.failing = async function (kind, options) {
  try {
    await navigator.credentials[kind](options);
    return 'ok';
  } catch (error) {
    return error.name;
  }
};

window.aborted = async function (requestJSON) {
  const controller = new AbortController();
  const call = navigator.credentials.get({ mediation: 'conditional', publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(requestJSON), signal: controller.signal });
  controller.abort();
  try {
    await call;
    return 'ok';
  } catch (error) {
    return error.name;
  }
};
