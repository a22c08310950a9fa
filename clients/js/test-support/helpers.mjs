/**
 * What the tests share: a server of their own, a small CBOR decoder, and a relying party's
 * checks of the responses made with node:crypto alone (nothing of the client's own code judges
 * its answers).
 */
import assert from 'node:assert/strict';
import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { AuthctlServer } from '../src/index.mjs';

export const RP_ID = 'example.com';
export const ORIGIN = 'https://example.com';

/** Generous: the machine running the tests may be shared and slow. */
export const DEADLINE = 60_000;

// ---------------------------------------------------------------------------------------------
// A server

/**
 * Starts `authctl serve` ($AUTHCTL_BIN, else `authctl` on the PATH) with a home and TMPDIR of its
 * own; `stop()` stops it (asserting exit 0) and removes them.
 */
export async function startServer(settings = {}) {
  const scratch = mkdtempSync(join(tmpdir(), 'authctl-js-'));
  const home = join(scratch, 'home');
  const tmp = join(scratch, 'tmp');
  mkdirSync(home);
  mkdirSync(tmp);
  const server = await AuthctlServer.start({ ...settings, env: { HOME: home, TMPDIR: tmp, ...settings.env } });
  const stop = async () => {
    try {
      await server.stop();
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  };
  return { server, scratch, stop };
}

// ---------------------------------------------------------------------------------------------
// Bytes

export const b64url = (bytes) => Buffer.from(bytes).toString('base64url');
export const unb64url = (text) => Buffer.from(text, 'base64url');
export const sha256 = (data) => createHash('sha256').update(data).digest();

/** Random base64url text of `n` bytes (a challenge, a user id). */
export const randomId = (n = 32) => b64url(randomBytes(n));

/** A copy of `response` with one bit of `response.response[field]` flipped at byte `index`. */
export function tamper(response, field, index = -1) {
  const copy = structuredClone(response);
  const bytes = unb64url(copy.response[field]);
  const at = index < 0 ? bytes.length + index : index;
  bytes[at] ^= 0x01;
  copy.response[field] = b64url(bytes);
  return copy;
}

/**
 * Waits for `condition()` (it may be async) to be truthy, polling, up to a generous deadline;
 * fails naming `what` when the deadline passes. Resolves with the truthy value.
 */
export async function waitUntil(condition, what, { timeout = DEADLINE, poll = 20 } = {}) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) assert.fail(`not within ${timeout} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, poll));
  }
}

// ---------------------------------------------------------------------------------------------
// CBOR (RFC 8949): the subset WebAuthn uses — integers, byte and text strings, arrays, maps
// (as Map, keys kept as they are), simple values and floats; definite lengths only.

export function decodeCbor(bytes) {
  const data = Buffer.from(bytes);
  const [value, end] = decodeItem(data, 0);
  return { value, end };
}

/** The one CBOR item `bytes` holds (nothing may follow it). */
export function decodeCborExactly(bytes) {
  const { value, end } = decodeCbor(bytes);
  if (end !== bytes.length) throw new Error(`CBOR: ${bytes.length - end} bytes after the item`);
  return value;
}

function decodeItem(data, at) {
  if (at >= data.length) throw new Error('CBOR: the data ends early');
  const initial = data[at];
  const major = initial >> 5;
  const info = initial & 0x1f;
  let offset = at + 1;
  let argument;
  if (info < 24) {
    argument = info;
  } else if (info === 24) {
    argument = data.readUInt8(offset);
    offset += 1;
  } else if (info === 25) {
    argument = data.readUInt16BE(offset);
    offset += 2;
  } else if (info === 26) {
    argument = data.readUInt32BE(offset);
    offset += 4;
  } else if (info === 27) {
    const big = data.readBigUInt64BE(offset);
    offset += 8;
    argument = big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
  } else {
    throw new Error(`CBOR: additional information ${info} (indefinite lengths are not used by WebAuthn) at ${at}`);
  }
  const take = (n) => {
    if (offset + n > data.length) throw new Error('CBOR: a string runs past the end');
    const out = data.subarray(offset, offset + n);
    offset += n;
    return out;
  };
  switch (major) {
    case 0:
      return [argument, offset];
    case 1:
      return [typeof argument === 'bigint' ? -1n - argument : -1 - argument, offset];
    case 2:
      return [Buffer.from(take(argument)), offset];
    case 3:
      return [take(argument).toString('utf8'), offset];
    case 4: {
      const list = [];
      for (let i = 0; i < argument; i++) {
        const [item, next] = decodeItem(data, offset);
        list.push(item);
        offset = next;
      }
      return [list, offset];
    }
    case 5: {
      const map = new Map();
      for (let i = 0; i < argument; i++) {
        const [key, afterKey] = decodeItem(data, offset);
        const [value, afterValue] = decodeItem(data, afterKey);
        map.set(key, value);
        offset = afterValue;
      }
      return [map, offset];
    }
    case 6: {
      const [value, next] = decodeItem(data, offset);
      return [{ tag: argument, value }, next];
    }
    default: // 7
      if (info === 20) return [false, offset];
      if (info === 21) return [true, offset];
      if (info === 22) return [null, offset];
      if (info === 23) return [undefined, offset];
      if (info === 25) return [halfFloat(argument), offset];
      if (info === 26) return [data.readFloatBE(at + 1), offset];
      if (info === 27) return [data.readDoubleBE(at + 1), offset];
      return [{ simple: argument }, offset];
  }
}

function halfFloat(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

// ---------------------------------------------------------------------------------------------
// WebAuthn, as a relying party checks it

/**
 * Authenticator data (WebAuthn §6.1): the RP ID hash, the flags, the counter and, when AT is
 * set, the attested credential data with its COSE key.
 */
export function parseAuthenticatorData(bytes) {
  const data = Buffer.from(bytes);
  assert.ok(data.length >= 37, `authenticator data is ${data.length} bytes, under 37`);
  const flagsByte = data[32];
  const flags = {
    UP: !!(flagsByte & 0x01), UV: !!(flagsByte & 0x04), BE: !!(flagsByte & 0x08), BS: !!(flagsByte & 0x10),
    AT: !!(flagsByte & 0x40), ED: !!(flagsByte & 0x80),
  };
  const out = { rpIdHash: data.subarray(0, 32), flags, signCount: data.readUInt32BE(33) };
  let offset = 37;
  if (flags.AT) {
    const aaguid = data.subarray(offset, offset + 16);
    const idLength = data.readUInt16BE(offset + 16);
    const credentialId = data.subarray(offset + 18, offset + 18 + idLength);
    offset += 18 + idLength;
    const { value: publicKey, end } = decodeCbor(data.subarray(offset));
    out.attested = { aaguid, credentialId, publicKey };
    offset += end;
  }
  if (flags.ED) {
    const { value, end } = decodeCbor(data.subarray(offset));
    out.extensions = value;
    offset += end;
  }
  assert.equal(offset, data.length, 'authenticator data has bytes after what its flags announce');
  return out;
}

/** A COSE EC2 P-256 key (kty 2, alg -7, crv 1) as a node:crypto public key. */
export function coseToPublicKey(cose) {
  assert.equal(cose.get(1), 2, 'COSE kty is EC2');
  assert.equal(cose.get(3), -7, 'COSE alg is ES256');
  assert.equal(cose.get(-1), 1, 'COSE crv is P-256');
  const x = cose.get(-2);
  const y = cose.get(-3);
  assert.equal(x.length, 32);
  assert.equal(y.length, 32);
  return createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: b64url(x), y: b64url(y) }, format: 'jwk' });
}

/** The SPKI DER of a public key. */
export const spki = (key) => key.export({ format: 'der', type: 'spki' });

/** clientDataJSON decoded and checked: its type, challenge and origin, and crossOrigin false. */
export function checkClientData(clientDataJSON, { type, challenge, origin }) {
  const client = JSON.parse(unb64url(clientDataJSON).toString('utf8'));
  assert.equal(client.type, type, 'clientDataJSON type');
  assert.equal(client.challenge, challenge, 'clientDataJSON challenge');
  assert.equal(client.origin, origin, 'clientDataJSON origin');
  assert.equal(client.crossOrigin ?? false, false, 'clientDataJSON crossOrigin');
  return client;
}

/**
 * A registration response checked as an RP checks it (fmt "none"): client data, RP ID hash, UP,
 * UV when required, the attested credential's id, and its COSE key equal to the response's
 * SPKI `publicKey`. Resolves with the credential's id and public key.
 */
export function verifyRegistration(response, { challenge, origin = ORIGIN, rpId = RP_ID, requireUV = true }) {
  assert.equal(response.type, 'public-key');
  assert.equal(response.id, response.rawId);
  checkClientData(response.response.clientDataJSON, { type: 'webauthn.create', challenge, origin });
  const attestation = decodeCborExactly(unb64url(response.response.attestationObject));
  assert.ok(attestation instanceof Map, 'the attestation object is a map');
  assert.equal(attestation.get('fmt'), 'none');
  assert.equal(attestation.get('attStmt').size, 0);
  const authData = attestation.get('authData');
  assert.deepEqual(authData, unb64url(response.response.authenticatorData), 'authenticatorData is the attestation\'s authData');
  const parsed = parseAuthenticatorData(authData);
  assert.deepEqual(parsed.rpIdHash, sha256(rpId), 'rpIdHash is SHA-256 of the RP ID');
  assert.ok(parsed.flags.UP, 'UP');
  if (requireUV) assert.ok(parsed.flags.UV, 'UV');
  assert.ok(parsed.flags.AT, 'AT');
  assert.equal(b64url(parsed.attested.credentialId), response.id, 'the attested credential id is the response\'s id');
  const publicKey = coseToPublicKey(parsed.attested.publicKey);
  assert.deepEqual(spki(publicKey), unb64url(response.response.publicKey), 'the COSE key is the response\'s SPKI publicKey');
  assert.equal(response.response.publicKeyAlgorithm, -7);
  return { id: response.id, publicKey, authData: parsed };
}

/**
 * Whether an assertion's ES256 signature verifies: over authenticatorData || SHA-256(clientDataJSON),
 * DER-encoded, under `publicKey` (a KeyObject, or SPKI DER bytes, or SPKI as base64url).
 */
export function signatureVerifies(response, publicKey) {
  const key = typeof publicKey === 'string' ? unb64url(publicKey) : publicKey;
  const signed = Buffer.concat([unb64url(response.response.authenticatorData), sha256(unb64url(response.response.clientDataJSON))]);
  const keyObject = Buffer.isBuffer(key) || key instanceof Uint8Array ? { key: Buffer.from(key), format: 'der', type: 'spki' } : key;
  return verify('sha256', signed, keyObject, unb64url(response.response.signature));
}

/**
 * An authentication response checked as an RP checks it: client data, RP ID hash, UP, UV when
 * required, and the signature under `publicKey`. Resolves with the parsed authenticator data.
 */
export function verifyAssertion(response, { challenge, publicKey, origin = ORIGIN, rpId = RP_ID, requireUV = false }) {
  assert.equal(response.type, 'public-key');
  assert.equal(response.id, response.rawId);
  checkClientData(response.response.clientDataJSON, { type: 'webauthn.get', challenge, origin });
  const parsed = parseAuthenticatorData(unb64url(response.response.authenticatorData));
  assert.deepEqual(parsed.rpIdHash, sha256(rpId), 'rpIdHash is SHA-256 of the RP ID');
  assert.ok(parsed.flags.UP, 'UP');
  if (requireUV) assert.ok(parsed.flags.UV, 'UV');
  assert.equal(parsed.flags.AT, false, 'no attested credential data in an assertion');
  assert.ok(signatureVerifies(response, publicKey), 'the signature verifies');
  return parsed;
}

// ---------------------------------------------------------------------------------------------
// Options, as an RP makes them

export function creationOptions({ rpId = RP_ID, userName = 'alice', userId = randomId(16), challenge = randomId(), exclude = [], uv = 'required' } = {}) {
  return {
    rp: { id: rpId, name: 'Example' },
    user: { id: userId, name: userName, displayName: userName[0].toUpperCase() + userName.slice(1) },
    challenge,
    pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
    timeout: 60_000,
    excludeCredentials: exclude.map((id) => ({ type: 'public-key', id })),
    authenticatorSelection: { residentKey: 'required', userVerification: uv },
    attestation: 'none',
  };
}

export function requestOptions({ rpId = RP_ID, challenge = randomId(), allow = [], uv = 'preferred' } = {}) {
  return {
    rpId,
    challenge,
    timeout: 60_000,
    allowCredentials: allow.map((id) => ({ type: 'public-key', id })),
    userVerification: uv,
  };
}

// ---------------------------------------------------------------------------------------------
// The example bank (docs/examples/rp_server.py), for the audit

/**
 * Starts the example bank on a free port with each of `flaws` ($PYTHON, else the repository's
 * .venv, else python3); resolves with `{url, stop}`.
 */
export async function startBank({ flaws = [] } = {}) {
  const { spawn } = await import('node:child_process');
  const { existsSync } = await import('node:fs');
  const { createInterface } = await import('node:readline');
  const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..', '..');
  const venv = join(root, '.venv', 'bin', 'python');
  const python = process.env.PYTHON || (existsSync(venv) ? venv : 'python3');
  const args = [join(root, 'docs', 'examples', 'rp_server.py'), '--port', '0', ...flaws.flatMap((f) => ['--flaw', f])];
  const child = spawn(python, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the bank did not listen within ${DEADLINE} ms:\n${stderr}`)), DEADLINE);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /^listening on (\S+)$/.exec(line);
      if (match) { clearTimeout(timer); resolve(match[1]); }
    });
    child.once('error', (error) => { clearTimeout(timer); reject(error); });
    exited.then((code) => { clearTimeout(timer); reject(new Error(`the bank exited (${code}) before it listened:\n${stderr}`)); });
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return { url, stop };
}
