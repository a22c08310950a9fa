// A client library of the kind many sites use, written for these tests: it takes the RP's options
// as JSON (base64url strings), makes the BufferSources itself, calls the browser, and hands back
// the credential with a toJSON of its own assigned onto it — as GitHub's webauthn-json ponyfill
// does — so that what the page posts is JSON.stringify(credential). It reads every member it needs
// through the objects' own API (getTransports(), getClientExtensionResults(), …).
'use strict';

const fromBase64url = (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0)).buffer;
const toBase64url = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const descriptors = (list) => list && list.map((d) => ({ ...d, id: fromBase64url(d.id) }));
function prfInputs(extensions) {
  if (!extensions || !extensions.prf || !extensions.prf.eval) return extensions;
  const values = extensions.prf.eval;
  return { ...extensions, prf: { eval: { first: fromBase64url(values.first), ...(values.second ? { second: fromBase64url(values.second) } : {}) } } };
}
// The extension outputs as JSON: every ArrayBuffer as base64url, the rest as it is.
function outputsJSON(value) {
  if (value instanceof ArrayBuffer) return toBase64url(value);
  if (Array.isArray(value)) return value.map(outputsJSON);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, outputsJSON(v)]));
  return value;
}

window.librarySignUp = async function (json) {
  const publicKey = { ...json, challenge: fromBase64url(json.challenge), user: { ...json.user, id: fromBase64url(json.user.id) },
                      excludeCredentials: descriptors(json.excludeCredentials), extensions: prfInputs(json.extensions) };
  const credential = await navigator.credentials.create({ publicKey });
  credential.toJSON = () => ({
    type: credential.type, id: credential.id, rawId: toBase64url(credential.rawId),
    authenticatorAttachment: credential.authenticatorAttachment,
    response: { clientDataJSON: toBase64url(credential.response.clientDataJSON),
                attestationObject: toBase64url(credential.response.attestationObject),
                transports: credential.response.getTransports() },
    clientExtensionResults: outputsJSON(credential.getClientExtensionResults()),
  });
  return { posted: JSON.parse(JSON.stringify(credential)), browsers: PublicKeyCredential.prototype.toJSON.call(credential) };
};

window.librarySignIn = async function (json) {
  const publicKey = { ...json, challenge: fromBase64url(json.challenge), allowCredentials: descriptors(json.allowCredentials),
                      extensions: prfInputs(json.extensions) };
  const credential = await navigator.credentials.get({ publicKey });
  const { response } = credential;
  credential.toJSON = () => ({
    type: credential.type, id: credential.id, rawId: toBase64url(credential.rawId),
    authenticatorAttachment: credential.authenticatorAttachment,
    response: { clientDataJSON: toBase64url(response.clientDataJSON), authenticatorData: toBase64url(response.authenticatorData),
                signature: toBase64url(response.signature), userHandle: response.userHandle && toBase64url(response.userHandle) },
    clientExtensionResults: outputsJSON(credential.getClientExtensionResults()),
  });
  return { posted: JSON.parse(JSON.stringify(credential)), browsers: PublicKeyCredential.prototype.toJSON.call(credential) };
};
