/**
 * A client for `authctl serve`: the software platform authenticator over HTTP.
 *
 * The module starts (or connects to) a server, makes isolated accounts on it, and drives their
 * devices: registrations and sign-ins answered with the response JSON a browser gives a page,
 * the passkeys each device holds, the account's virtual clock and sync, and its event stream.
 * It uses nothing but Node's built-ins and the global `fetch` (Node 18 or later).
 *
 * @module authctl-client
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { KeyObject } from 'node:crypto';
import { createInterface } from 'node:readline';

/** How long {@link AuthctlServer.start} waits for the server's first lines, in milliseconds. */
const START_TIMEOUT = 30_000;
/** How long {@link AuthctlServer#stop} waits for the server to exit before it kills it. */
const STOP_TIMEOUT = 30_000;
/** How long {@link EventStream#waitFor} waits by default, in milliseconds. */
const WAIT_TIMEOUT = 30_000;
/** How much of the server's standard error is kept for error messages, in characters. */
const STDERR_KEPT = 64 * 1024;

// ---------------------------------------------------------------------------------------------
// Base64url and request bodies

/**
 * Bytes as unpadded base64url, the encoding of every binary value in the API.
 *
 * @param {ArrayBuffer | ArrayBufferView} bytes
 * @returns {string}
 */
export function toBase64Url(bytes) {
  return asBuffer(bytes).toString('base64url');
}

/**
 * The bytes of base64url text (padded or not).
 *
 * @param {string} text
 * @returns {Buffer}
 */
export function fromBase64Url(text) {
  return Buffer.from(text, 'base64url');
}

function asBuffer(bytes) {
  if (bytes instanceof ArrayBuffer) return Buffer.from(bytes);
  if (ArrayBuffer.isView(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  throw new TypeError('expected an ArrayBuffer or a typed array');
}

/** A binary value (ArrayBuffer, typed array, Buffer) as base64url; a string as it is. */
function binaryText(value) {
  return typeof value === 'string' ? value : toBase64Url(value);
}

/**
 * JSON text of a request body: binary values anywhere in it (ArrayBuffer, typed arrays, Buffer)
 * become base64url, so options written with `Uint8Array` challenges and user ids go as the JSON
 * forms of WebAuthn Level 3 do.
 */
function bodyText(body) {
  return JSON.stringify(body, function replace(key, value) {
    const original = this[key]; // before Buffer#toJSON
    if (original instanceof ArrayBuffer || ArrayBuffer.isView(original)) return toBase64Url(original);
    return value;
  });
}

/**
 * The request body of a ceremony: `options` as given, or the `publicKey` member of
 * `{publicKey: …}` (what an RP often sends, and what a page passes to `navigator.credentials`),
 * whose `mediation` is taken too unless `extra` gives one.
 */
function ceremonyBody(options, origin, extra) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw new TypeError('options must be an object');
  const wrapped = 'publicKey' in options && !('challenge' in options);
  const body = { ...defined(extra), options: wrapped ? options.publicKey : options, origin };
  if (wrapped && options.mediation !== undefined && body.mediation === undefined) body.mediation = options.mediation;
  return body;
}

/** Members of `object` whose value is not undefined. */
function defined(object) {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));
}

/** One path segment, percent-encoded. */
function segment(text) {
  if (typeof text !== 'string' || text === '') throw new TypeError(`expected a non-empty string, got ${JSON.stringify(text)}`);
  return encodeURIComponent(text);
}

/** A time as the API takes it: a `Date` as milliseconds since the Unix epoch, else as given. */
function timeValue(time) {
  return time instanceof Date ? time.getTime() : time;
}

// ---------------------------------------------------------------------------------------------
// Errors

/**
 * A failure the server answered: an `application/problem+json` body (RFC 9457), its members as
 * properties. `name` is the row of the project's error table (`notHandled`, `badInput`,
 * `canceled`, …, or `unauthorized`); `domException` is the `DOMException` a browser would throw
 * for it (`NotAllowedError`, `InvalidStateError`, …) where there is one; `ctapStatus` the CTAP2
 * status code where there is one.
 */
export class AuthctlError extends Error {
  /**
   * @param {object} fields
   * @param {number} fields.status the HTTP status
   * @param {string} [fields.name] the problem's `name`
   * @param {string} [fields.domException]
   * @param {number} [fields.ctapStatus]
   * @param {string} [fields.detail]
   * @param {string} [fields.title]
   * @param {string} [fields.type]
   * @param {object} [fields.problem] the whole body, when it was JSON
   * @param {string} [fields.method] the request's method
   * @param {string} [fields.path] the request's path
   */
  constructor({ status, name, domException, ctapStatus, detail, title, type, problem, method, path }) {
    const what = name ?? `HTTP ${status}`;
    const request = method && path ? `${method} ${path}: ` : '';
    super(`${detail || what} (${request}${status} ${what})`);
    /** @type {number} */
    this.status = status;
    /** @type {string} */
    this.name = what;
    /** @type {string | undefined} */
    this.domException = domException;
    /** @type {number | undefined} */
    this.ctapStatus = ctapStatus;
    /** @type {string | undefined} */
    this.detail = detail;
    /** @type {string | undefined} */
    this.title = title;
    /** @type {string | undefined} */
    this.type = type;
    /** @type {object | undefined} */
    this.problem = problem;
    /** @type {string | undefined} */
    this.method = method;
    /** @type {string | undefined} */
    this.path = path;
  }

  /** The error of a response that is not 2xx, from its body. */
  static async fromResponse(response, method, path) {
    const text = await response.text();
    let problem;
    try {
      problem = JSON.parse(text);
    } catch {
      problem = undefined;
    }
    if (problem === null || typeof problem !== 'object' || Array.isArray(problem)) {
      return new AuthctlError({ status: response.status, detail: text.trim() || response.statusText, method, path });
    }
    return new AuthctlError({
      status: response.status, name: problem.name ?? problem.title, domException: problem.domException, ctapStatus: problem.ctapStatus,
      detail: problem.detail, title: problem.title, type: problem.type, problem, method, path,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The server

/** The servers this module started that are still running: sent SIGTERM when Node exits. */
const running = new Set();

function stopRunning() {
  for (const child of running) child.kill('SIGTERM');
}

/** `promise`, or `undefined` once `ms` milliseconds have passed first. */
async function within(ms, promise) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * An `authctl serve` process this client started, or one started elsewhere
 * ({@link AuthctlServer.connect}), and the requests made to it.
 */
export class AuthctlServer {
  #child;
  #exit;
  #stderrOf = () => '';

  /**
   * Use {@link AuthctlServer.start} or {@link AuthctlServer.connect}.
   *
   * @param {string} url the server's base URL, `http://HOST:PORT`
   * @param {string} token the bearer token every request carries
   */
  constructor(url, token) {
    if (typeof url !== 'string' || !/^http:\/\//.test(url)) {
      throw new TypeError(`the server's URL must be http://HOST:PORT (got ${JSON.stringify(url)}; a Unix socket is not reachable with fetch)`);
    }
    /** The server's base URL, `http://HOST:PORT`, without a trailing slash. */
    this.url = url.replace(/\/+$/, '');
    /** The bearer token every request carries. */
    this.token = token;
  }

  /**
   * Starts `authctl serve` and resolves once it listens.
   *
   * The binary is `bin`, else `$AUTHCTL_BIN`, else `authctl` on the `PATH`. It listens on a
   * free loopback port unless `args` says otherwise (`--listen`); `--socket` is refused, as
   * `fetch` cannot reach a Unix socket. Its standard error is kept (the last 64 KiB) for the
   * error messages of {@link AuthctlServer#stop} and of a failed start.
   *
   * @param {object} [settings]
   * @param {string} [settings.bin] the authctl binary
   * @param {string[]} [settings.args] more arguments after `serve` (`--threads 8`, `--listen 127.0.0.1:8321`)
   * @param {string[]} [settings.globalArgs] arguments before `serve` (`--vault DIR`, `--passphrase-file FILE`)
   * @param {Record<string, string | undefined>} [settings.env] variables added to the server's
   *   environment (Node's own); a variable given as `undefined` is removed
   * @param {string} [settings.tokenFile] `--token-file FILE`: the token is read from it (made when missing)
   *   rather than from the server's second line
   * @param {string} [settings.cwd] the server's working directory
   * @param {number} [settings.timeout=30000] how long to wait for it to listen, in milliseconds
   * @returns {Promise<AuthctlServer>}
   */
  static async start({ bin, args = [], globalArgs = [], env, tokenFile, cwd, timeout = START_TIMEOUT } = {}) {
    const binary = bin ?? (process.env.AUTHCTL_BIN || 'authctl');
    if (args.includes('--socket') || args.some((a) => a.startsWith('--socket='))) {
      throw new TypeError('--socket is not supported: fetch speaks to TCP addresses only');
    }
    const argv = [...globalArgs, 'serve', ...(tokenFile ? ['--token-file', tokenFile] : []), ...args];
    const environment = { ...process.env };
    for (const [key, value] of Object.entries(env ?? {})) {
      if (value === undefined) delete environment[key];
      else environment[key] = String(value);
    }
    const child = spawn(binary, argv, { env: environment, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk).slice(-STDERR_KEPT);
    });
    const exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    const failed = new Promise((resolve) => child.on('error', resolve));
    running.add(child);
    child.once('exit', () => running.delete(child));
    if (running.size === 1 && !process.listeners('exit').includes(stopRunning)) process.on('exit', stopRunning);

    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    let url, token;
    const ready = new Promise((resolve) => {
      lines.on('line', (line) => {
        const listening = /^listening on (\S+)$/.exec(line);
        const printed = /^token (\S+)$/.exec(line);
        if (listening) url = listening[1];
        if (printed) token = printed[1];
        if (url && (token || tokenFile)) resolve();
      });
    });
    let timer;
    const deadline = new Promise((resolve) => {
      timer = setTimeout(resolve, timeout);
    });
    const outcome = await Promise.race([
      ready.then(() => ({ ready: true })),
      exited.then((exit) => ({ exit })),
      failed.then((error) => ({ error })),
      deadline.then(() => ({ late: true })),
    ]);
    clearTimeout(timer);
    const giveUp = async (message, cause) => {
      running.delete(child);
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        child.kill('SIGKILL');
        await exited;
      }
      const error = new Error(`${message}${stderr.trim() ? `\n${stderr.trim()}` : ''}`, cause ? { cause } : undefined);
      error.stderr = stderr;
      throw error;
    };
    if (outcome.error) return giveUp(`cannot start ${binary}: ${outcome.error.message}`, outcome.error);
    if (outcome.exit) {
      const { code, signal } = outcome.exit;
      // What it wrote before it ended is read to the end of the pipe (a few seconds at most).
      if (!child.stderr.readableEnded) await within(5_000, new Promise((resolve) => child.stderr.once('end', resolve)));
      return giveUp(`${binary} serve ended before it listened (${signal ? `signal ${signal}` : `exit code ${code}`})`);
    }
    if (outcome.late) return giveUp(`${binary} serve did not print 'listening on' within ${timeout} ms`);
    if (url.startsWith('unix:')) return giveUp(`${binary} serve listens on ${url}, which fetch cannot reach`);
    if (tokenFile) {
      token = (await readFile(tokenFile, 'utf8')).split('\n')[0].trim();
    }
    lines.removeAllListeners('line');
    lines.on('line', () => {}); // keep the pipe drained
    // The server does not keep Node running by itself: once nothing else does, Node exits and
    // sends it SIGTERM (stopRunning).
    child.unref();
    child.stdout.unref();
    child.stderr.unref();

    const server = new AuthctlServer(url, token);
    server.#child = child;
    server.#stderrOf = () => stderr;
    server.#exit = exited;
    return server;
  }

  /**
   * A client for a server started elsewhere. {@link AuthctlServer#stop} on it does nothing.
   *
   * @param {string} url its base URL, `http://HOST:PORT`
   * @param {string} token its bearer token
   * @returns {AuthctlServer}
   */
  static connect(url, token) {
    return new AuthctlServer(url, token);
  }

  /** The server's process id, when this client started it. */
  get pid() {
    return this.#child?.pid;
  }

  /** The server's standard error so far (the last 64 KiB), when this client started it. */
  get stderr() {
    return this.#stderrOf();
  }

  /**
   * Stops a server this client started: SIGTERM, which finishes the requests in flight, ends the
   * event streams and removes every in-memory account. Resolves with `{code: 0}` once it has
   * exited 0; rejects when it exits otherwise, or has not exited within `timeout` (it is then
   * killed). On a connected server ({@link AuthctlServer.connect}) it resolves at once.
   *
   * @param {object} [settings]
   * @param {number} [settings.timeout=30000] milliseconds
   * @returns {Promise<{code: number}>}
   */
  async stop({ timeout = STOP_TIMEOUT } = {}) {
    const child = this.#child;
    if (!child) return { code: 0 };
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const exit = await within(timeout, this.#exit);
    if (exit === undefined) {
      child.kill('SIGKILL');
      await this.#exit;
      throw new Error(`authctl serve (pid ${child.pid}) did not exit within ${timeout} ms of SIGTERM; it was killed\n${this.stderr.trim()}`);
    }
    if (exit.code !== 0) {
      const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
      const error = new Error(`authctl serve (pid ${child.pid}) ended with ${how}${this.stderr.trim() ? `\n${this.stderr.trim()}` : ''}`);
      error.code = exit.code;
      error.signal = exit.signal;
      throw error;
    }
    return { code: 0 };
  }

  /**
   * One request: the body as JSON (binary values as base64url), the answer's JSON back
   * (`undefined` for `204`). A status that is not 2xx throws {@link AuthctlError}.
   *
   * @param {string} method
   * @param {string} path from the server's root, such as `/accounts`
   * @param {object} [body]
   * @param {object} [settings]
   * @param {AbortSignal} [settings.signal] aborts the request
   * @returns {Promise<any>}
   */
  async request(method, path, body, { signal } = {}) {
    const headers = { authorization: `Bearer ${this.token}`, accept: 'application/json, application/problem+json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(this.url + path, { method, headers, body: body === undefined ? undefined : bodyText(body), signal });
    if (!response.ok) throw await AuthctlError.fromResponse(response, method, path);
    const text = await response.text();
    return text === '' ? undefined : JSON.parse(text);
  }

  /** `GET /health`: `{status: "ok"}`. */
  health() {
    return this.request('GET', '/health');
  }

  /** `GET /openapi.json`: the API's description. */
  openapi() {
    return this.request('GET', '/openapi.json');
  }

  /**
   * `POST /accounts`: a new account, isolated from every other (its own throw-away vault and
   * lock). With no settings it has one device, `phone`, PIN `1234`. Devices after the first that
   * have a PIN are approved by an earlier device with a PIN, as joining a synced keychain is.
   *
   * @param {object} [settings]
   * @param {Array<{name: string, pin?: string, maxPINAttempts?: number, profile?: string, aaguid?: string}>} [settings.devices]
   * @param {{mode: 'real' | 'virtual', start?: string | number | Date}} [settings.clock] a virtual clock
   *   starts at `start` (RFC 3339 or milliseconds since the epoch; default now) and moves only when told
   * @param {{upload?: string | number, download?: string | number, seed?: number, backupStateImmediate?: boolean}} [settings.sync]
   *   sync delays (`"2s"`, `"1s..5s"`, or milliseconds), their seed, and whether BS is set before an upload lands
   * @param {string} [settings.profile] the authenticator profile of every device (`authctl profiles`)
   * @param {'memory' | 'vault'} [settings.storage] `memory` (default) or a vault on disk
   * @returns {Promise<Account>}
   */
  async createAccount({ devices, clock, sync, profile, storage } = {}) {
    const body = defined({ devices, clock: clock && defined({ ...clock, start: timeValue(clock.start) }), sync, profile, storage });
    const report = await this.request('POST', '/accounts', body);
    return new Account(this, report.id, report);
  }

  /**
   * `POST /audits`: starts `authctl audit` against the RP at `url` (docs/audit.md) and resolves at
   * once with an {@link Audit} to follow, wait for or cancel. At most four run at once on a server
   * (a fifth is refused with HTTP 429).
   *
   * @param {string} url the RP, as `http(s)://host[:port]`
   * @param {object} settings one of `preset` and `profile`
   * @param {string} [settings.preset] a built-in shape (`rp-server`, …: `authctl audit --help`)
   * @param {object} [settings.profile] the RP's shape (docs/audit.md, "A profile for your RP")
   * @param {string} [settings.origin] the origin the RP's pages have, in place of the profile's
   * @param {string[]} [settings.only] cases or families to run
   * @param {string[]} [settings.skip] cases or families to leave out
   * @param {number} [settings.rate] requests a second at most (default 50)
   * @returns {Promise<Audit>}
   */
  async startAudit(url, { preset, profile, origin, only, skip, rate } = {}) {
    const status = await this.request('POST', '/audits', defined({ url, preset, profile, origin, only, skip, rate }));
    return new Audit(this, status);
  }

  /**
   * Runs an audit (as {@link AuthctlServer#startAudit}) and resolves with its report; rejects
   * with an {@link AuditFailedError} when the RP could not be audited (`rpUnusable`) or after
   * `timeout` milliseconds (the audit is then stopped). `assertNoFindings(report)` fails a test
   * on what it found.
   *
   * @param {string} url
   * @param {object} settings those of `startAudit`, and `timeout` (default 600,000 ms)
   * @returns {Promise<object>} the report: `{target, origin, counts, results: [{id, family, spec, check, reference, verdict, evidence, exchanges?}]}`
   */
  async audit(url, { timeout = 600_000, ...settings } = {}) {
    const running = await this.startAudit(url, settings);
    return running.wait({ timeout });
  }

  /**
   * A handle on an account that exists already (made by another client, or the `vault` account
   * of `authctl --vault DIR serve`). Makes no request.
   *
   * @param {string} id
   * @returns {Account}
   */
  account(id) {
    return new Account(this, id);
  }
}

// ---------------------------------------------------------------------------------------------
// Audits

/** An audit that ended without a report: `name` is `rpUnusable` or `canceled`, `detail` why. */
export class AuditFailedError extends Error {
  constructor(id, name, detail) {
    super(`audit ${id}: ${name}: ${detail}`);
    this.name = name;
    this.auditId = id;
    this.detail = detail;
  }
}

/** The findings of a report: cases ACCEPTED, answered with a server error, or (a valid response) REFUSED; `failOn` as `authctl audit --fail-on`. */
export function auditFindings(report, failOn = 'any') {
  const wanted = { accepted: ['ACCEPTED'], 'server-error': ['server error'], any: ['ACCEPTED', 'server error', 'REFUSED'] }[failOn];
  if (!wanted) throw new TypeError(`failOn is accepted, server-error or any, not ${failOn}`);
  return report.results.filter((r) => wanted.includes(r.verdict));
}

/** Throws an `AssertionError`-like `Error` listing each finding (see {@link auditFindings}). */
export function assertNoFindings(report, failOn = 'any') {
  const found = auditFindings(report, failOn);
  if (found.length === 0) return;
  const lines = found.map((r) => `  ${r.id}: ${r.verdict} (${r.spec}) — ${r.evidence}`);
  const error = new Error(`${found.length} finding${found.length === 1 ? '' : 's'} against ${report.target}:\n${lines.join('\n')}`);
  error.findings = found;
  throw error;
}

/** One audit the server runs (`/audits/{id}`). */
export class Audit {
  constructor(server, status) {
    this.server = server;
    /** @type {string} */
    this.id = status.id;
    /** The last status read: `{id, state: running|done|failed|canceled, target, done, total, report?, error?}`. */
    this.last = status;
  }

  /** `GET /audits/{id}`. */
  async status() {
    this.last = await this.server.request('GET', `/audits/${encodeURIComponent(this.id)}`);
    return this.last;
  }

  /** Waits for it to end: its report, or an {@link AuditFailedError}; after `timeout` ms it is stopped. */
  async wait({ timeout = 600_000, poll = 100 } = {}) {
    const deadline = Date.now() + timeout;
    for (;;) {
      const status = await this.status();
      if (status.state === 'done') return status.report;
      if (status.state !== 'running') throw new AuditFailedError(this.id, status.error?.name ?? status.state, status.error?.detail ?? '');
      if (Date.now() >= deadline) {
        await this.cancel();
        throw new AuditFailedError(this.id, 'timedOut', `still running after ${timeout} ms (${status.done}/${status.total} cases): stopped`);
      }
      await new Promise((resolve) => setTimeout(resolve, poll));
    }
  }

  /** The report as JUnit XML text (once done). */
  junit() {
    return this.#text('junit');
  }

  /** The report as one self-contained HTML page (once done). */
  html() {
    return this.#text('html');
  }

  async #text(form) {
    const path = `/audits/${encodeURIComponent(this.id)}/${form}`;
    const response = await fetch(this.server.url + path, { headers: { authorization: `Bearer ${this.server.token}` } });
    if (!response.ok) throw await AuthctlError.fromResponse(response, 'GET', path);
    return response.text();
  }

  /** Stops it — the request under way within about a second — or forgets it, once ended. */
  async cancel() {
    await this.server.request('DELETE', `/audits/${encodeURIComponent(this.id)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Accounts

/**
 * One account on the server: its devices, its clock, its sync settings and its events.
 * Requests on one account run one at a time on the server; requests on different accounts never
 * wait on each other.
 */
export class Account {
  /**
   * @param {AuthctlServer} server
   * @param {string} id
   * @param {object} [report] the account as the server last described it
   */
  constructor(server, id, report) {
    /** @type {AuthctlServer} */
    this.server = server;
    /** The account's id. */
    this.id = id;
    /** The account as the server described it when this handle was made (`undefined` for {@link AuthctlServer#account}). */
    this.info = report;
    /** The account's path on the server. */
    this.path = `/accounts/${segment(id)}`;
  }

  /** `GET /accounts/{id}`: `{id, storage, devices, clock}`. */
  get() {
    return this.server.request('GET', this.path);
  }

  /**
   * A handle on one of the account's devices. Makes no request: a name the account does not
   * have fails on the handle's first request (`404`).
   *
   * @param {string} name
   * @returns {Device}
   */
  device(name) {
    return new Device(this, name);
  }

  /** `GET …/devices`: every device's state, as the server reports it (not handles). */
  async devices() {
    return (await this.server.request('GET', `${this.path}/devices`)).devices;
  }

  /**
   * `POST …/devices`: adds a device. One with a PIN is approved by an enrolled device: the one
   * `approvedBy` names (with `approverPin` as the PIN typed there), else the first whose PIN the
   * server knows.
   *
   * @param {{name: string, pin?: string, maxPINAttempts?: number, profile?: string, aaguid?: string, approvedBy?: string, approverPin?: string}} spec
   * @returns {Promise<Device>} its handle, its state as `info`
   */
  async addDevice(spec) {
    const report = await this.server.request('POST', `${this.path}/devices`, defined(spec));
    return new Device(this, report.name, report);
  }

  /**
   * `GET …/attestation-ca`: `{root, intermediate}` as PEM, what an attestation with `x5c` chains
   * to. The root is the RP's trust anchor; every account one server makes has the same.
   */
  attestationCA() {
    return this.server.request('GET', `${this.path}/attestation-ca`);
  }

  /** `GET …/clock`: `{mode, now, time}` (`now` in milliseconds since the epoch, `time` as RFC 3339). */
  clock() {
    return this.server.request('GET', `${this.path}/clock`);
  }

  /**
   * Moves a virtual clock forward (a real clock is a `400 usage` error).
   *
   * @param {string | number} duration `"2s"`, `"1m30s"`, `"500ms"`, or milliseconds
   * @returns {Promise<{mode: string, now: number, time: string}>} the clock after
   */
  advanceClock(duration) {
    return this.server.request('POST', `${this.path}/clock`, { advance: duration });
  }

  /**
   * Sets a virtual clock to a time, which may not be before its current time (`400 badInput`:
   * the clock does not go back).
   *
   * @param {string | number | Date} time RFC 3339, milliseconds since the epoch, or a `Date`
   * @returns {Promise<{mode: string, now: number, time: string}>} the clock after
   */
  setClock(time) {
    return this.server.request('POST', `${this.path}/clock`, { set: timeValue(time) });
  }

  /** `GET …/sync`: the sync settings and, per device, what is uploading and downloading. */
  syncStatus() {
    return this.server.request('GET', `${this.path}/sync`);
  }

  /**
   * `PUT …/sync`: sets delays (the account's, or `device`'s own), their seed, and whether BS is 1
   * before an upload lands. A transfer under way keeps the delay it started with.
   *
   * @param {{upload?: string | number, download?: string | number, device?: string, seed?: number, backupStateImmediate?: boolean}} settings
   * @returns {Promise<object>} the sync status after
   */
  setSync(settings) {
    return this.server.request('PUT', `${this.path}/sync`, defined(settings));
  }

  /**
   * `GET …/events`: opens the account's event stream and resolves once the server has answered
   * (events are recorded from the moment the first stream opens; sync is watched while one is
   * open). The server replays what it kept (the last 1000 events) first; `after` skips those up
   * to that event id. With `follow: false` the stream ends after what was kept.
   *
   * @param {object} [settings]
   * @param {number} [settings.after] an event id
   * @param {boolean} [settings.follow=true] whether the stream goes on with events as they happen
   * @returns {Promise<EventStream>}
   */
  async events({ after, follow } = {}) {
    const query = new URLSearchParams();
    if (after !== undefined) query.set('after', String(after));
    if (follow !== undefined) query.set('follow', follow ? 'true' : 'false');
    const text = query.toString();
    const path = `${this.path}/events${text ? `?${text}` : ''}`;
    const controller = new AbortController();
    const response = await fetch(this.server.url + path, {
      headers: { authorization: `Bearer ${this.server.token}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    if (!response.ok) throw await AuthctlError.fromResponse(response, 'GET', path);
    return new EventStream(response, controller, after);
  }

  /**
   * The events kept so far (the last 1000; those after `after`), read from a stream that ends
   * after them (`follow: false`). Recording starts with the account's first stream: this one, if
   * none was open before.
   *
   * @param {object} [settings]
   * @param {number} [settings.after] an event id
   * @returns {Promise<Array<{id: number, name: string, data: any, raw: string}>>}
   */
  async recordedEvents({ after } = {}) {
    const stream = await this.events({ after, follow: false });
    await stream.finished;
    return stream.received;
  }

  /** `DELETE /accounts/{id}`: ends the account; its streams end and its vault is removed. */
  async delete() {
    await this.server.request('DELETE', this.path);
  }
}

// ---------------------------------------------------------------------------------------------
// Events

/**
 * An account's Server-Sent Events, read from the response body as they come.
 *
 * Each event is `{id, name, data, raw}`: `id` the server's number, `name` the event type
 * (`credentialAdded`, `credentialAsserted`, `credentialUpdated`, `credentialDeleted`,
 * `syncLanded`, `syncArrived`), `data` its JSON parsed, `raw` the data text. Every event
 * received is kept in {@link EventStream#received}.
 */
export class EventStream {
  #controller;
  #waiters = [];
  #listeners = new Set();
  #delivered = new Set();
  #ended = false;
  #endReason;
  #pump;

  #after;

  /** @internal */
  constructor(response, controller, after) {
    this.#controller = controller;
    this.#after = after === undefined ? undefined : Number(after);
    /** Every event received so far, in order. @type {Array<{id: number, name: string, data: any, raw: string}>} */
    this.received = [];
    /** How many comments (`: ping`) have been received. */
    this.comments = 0;
    this.#pump = this.#read(response.body);
  }

  /** Whether the stream has ended (closed here, or ended by the server). */
  get ended() {
    return this.#ended;
  }

  /** Resolves once the stream has ended (closed here, or ended by the server); never rejects. */
  get finished() {
    return this.#pump;
  }

  async #read(body) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let event = { data: [] };
    const line = (text) => {
      if (text === '') {
        if (event.data.length > 0 || event.name !== undefined) this.#dispatch(event);
        event = { data: [] };
        return;
      }
      if (text.startsWith(':')) {
        this.comments += 1;
        return;
      }
      const colon = text.indexOf(':');
      const field = colon < 0 ? text : text.slice(0, colon);
      let value = colon < 0 ? '' : text.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event.name = value;
      else if (field === 'data') event.data.push(value);
      else if (field === 'id') event.id = value;
    };
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
          if (buffer[end] === '\r' && end === buffer.length - 1) break; // a CR that may start a CRLF
          const width = buffer.startsWith('\r\n', end) ? 2 : 1;
          line(buffer.slice(0, end));
          buffer = buffer.slice(end + width);
        }
      }
      this.#finish('the event stream ended (the account or the server ended)');
    } catch (error) {
      this.#finish(this.#controller.signal.aborted ? 'the event stream was closed' : `the event stream failed: ${error.message}`);
    }
  }

  #dispatch({ id, name = 'message', data }) {
    const raw = data.join('\n');
    let parsed;
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = raw;
    }
    const event = { id: id === undefined ? undefined : Number(id), name, data: parsed, raw };
    // What the server replays is after `after` already; this holds to it whatever the server does.
    if (this.#after !== undefined && event.id !== undefined && event.id <= this.#after) return;
    this.received.push(event);
    for (const listener of this.#listeners) listener();
    for (const waiter of [...this.#waiters]) {
      if (this.#delivered.has(event)) break;
      if (waiter.matches(event)) waiter.deliver(event);
    }
  }

  #finish(reason) {
    if (this.#ended) return;
    this.#ended = true;
    this.#endReason = reason;
    for (const waiter of [...this.#waiters]) waiter.fail(reason);
    for (const listener of this.#listeners) listener();
  }

  /**
   * Waits for an event named `name` whose data `predicate` accepts, and resolves with it. Events
   * received before the call count: the first that matches and that no earlier `waitFor` on this
   * stream returned is the answer, so an event that came before the wait began is not missed, and
   * two waits for the same name return two events. Rejects when `timeout` passes first or the
   * stream ends, naming the events received.
   *
   * @param {string} name the event type, such as `syncArrived`
   * @param {(data: any, event: {id: number, name: string, data: any, raw: string}) => boolean} [predicate]
   * @param {object} [settings]
   * @param {number} [settings.timeout=30000] milliseconds
   * @returns {Promise<{id: number, name: string, data: any, raw: string}>}
   */
  waitFor(name, predicate = () => true, { timeout = WAIT_TIMEOUT } = {}) {
    const matches = (event) => event.name === name && !this.#delivered.has(event) && predicate(event.data, event);
    return new Promise((resolve, reject) => {
      let waiter;
      try {
        const earlier = this.received.find(matches);
        if (earlier) {
          this.#delivered.add(earlier);
          resolve(earlier);
          return;
        }
      } catch (error) {
        reject(error);
        return;
      }
      const seen = () => this.received.map((e) => e.name).join(', ') || 'none';
      const settle = () => {
        clearTimeout(waiter.timer);
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      };
      waiter = {
        matches: (event) => {
          try {
            return matches(event);
          } catch (error) {
            settle();
            reject(error);
            return false;
          }
        },
        deliver: (event) => {
          settle();
          this.#delivered.add(event);
          resolve(event);
        },
        fail: (reason) => {
          settle();
          reject(new Error(`no matching ${name} event: ${reason} (received: ${seen()})`));
        },
        timer: undefined,
      };
      if (this.#ended) {
        reject(new Error(`no matching ${name} event: ${this.#endReason} (received: ${seen()})`));
        return;
      }
      this.#waiters.push(waiter);
      waiter.timer = setTimeout(() => {
        settle();
        const error = new Error(`no matching ${name} event within ${timeout} ms (received: ${seen()})`);
        error.code = 'ETIMEDOUT';
        reject(error);
      }, timeout);
    });
  }

  /**
   * Every event, from the first received, as they come; ends when the stream ends.
   *
   * @returns {AsyncIterator<{id: number, name: string, data: any, raw: string}>}
   */
  async *[Symbol.asyncIterator]() {
    let index = 0;
    for (;;) {
      while (index < this.received.length) yield this.received[index++];
      if (this.#ended) return;
      await new Promise((resolve) => {
        const listener = () => {
          this.#listeners.delete(listener);
          resolve();
        };
        this.#listeners.add(listener);
      });
    }
  }

  /**
   * Closes the stream; resolves once it is closed. Pending {@link EventStream#waitFor} calls
   * reject.
   *
   * @returns {Promise<void>}
   */
  async close() {
    if (!this.#ended) this.#controller.abort();
    await this.#pump;
  }
}

// ---------------------------------------------------------------------------------------------
// Devices

/**
 * One device of an account (the phone, the laptop): the ceremonies run on it, the passkeys it
 * holds, and its state.
 */
export class Device {
  /**
   * @param {Account} account
   * @param {string} name
   * @param {object} [report] the device as the server last described it
   */
  constructor(account, name, report) {
    /** @type {Account} */
    this.account = account;
    /** The device's name. */
    this.name = name;
    /** The device's state when this handle was made by {@link Account#addDevice}. */
    this.info = report;
    /** The device's path on the server. */
    this.path = `${account.path}/devices/${segment(name)}`;
  }

  get #server() {
    return this.account.server;
  }

  /** `GET …/devices/{name}`: `{name, vault, online, passkeysSupported, biometry, biometryEnrolled, passkeys, syncedFrom, acknowledged, uploadDelay, downloadDelay, pendingUploads, pendingDownloads}` (docs/reports.md, "Device"). */
  get() {
    return this.#server.request('GET', this.path);
  }

  /**
   * `navigator.credentials.create()` on this device: resolves with the registration response
   * JSON a browser's `PublicKeyCredential.toJSON()` gives the page.
   *
   * @param {object} options `PublicKeyCredentialCreationOptionsJSON`, or `{publicKey: …, mediation?}`
   *   holding it; binary members may be given as `Uint8Array`/`Buffer` (sent as base64url)
   * @param {string} origin the calling page's origin, such as `https://example.com`
   * @param {object} [extra] more members of the request: `topOrigin`, `mediation`, `userAction`
   *   (`approve`, `cancel`, `timeout`), `pin`, `fault` (`authctl faults`), `profile`, `via`,
   *   `deviceBound`, `recentPasswordSignIn`
   * @returns {Promise<object>} `RegistrationResponseJSON`
   */
  async register(options, origin, extra = {}) {
    return this.#server.request('POST', `${this.path}/register`, ceremonyBody(options, origin, extra));
  }

  /**
   * `navigator.credentials.get()` on this device: resolves with the authentication response JSON
   * a browser gives the page. With `mediation: "conditional"` the request waits until
   * {@link Device#autofill} picks a passkey (or the options' timeout passes).
   *
   * @param {object} options `PublicKeyCredentialRequestOptionsJSON`, or `{publicKey: …, mediation?}` holding it
   * @param {string} origin the calling page's origin
   * @param {object} [extra] as for {@link Device#register}, and `credentialId` or `user`: the
   *   passkey the person picks when several match
   * @returns {Promise<object>} `AuthenticationResponseJSON`
   */
  async sign(options, origin, extra = {}) {
    const body = ceremonyBody(options, origin, extra);
    if (body.credentialId !== undefined) body.credentialId = binaryText(body.credentialId);
    return this.#server.request('POST', `${this.path}/sign`, body);
  }

  /**
   * `POST …/autofill`: the person picks a passkey from the autofill list of the conditional
   * sign-in pending on this device. The server waits up to `wait` for one to be pending (default
   * 2 s, at most 60 s), else answers `409`.
   *
   * @param {{credentialId?: string | Uint8Array, user?: string, cancel?: boolean, wait?: string | number}} pick
   *   the passkey picked (by id or user name), or `cancel: true` (the list passed by); `wait` a
   *   duration (`"10s"`, or milliseconds)
   * @returns {Promise<{picked: true}>}
   */
  autofill(pick) {
    const body = defined({ ...pick });
    if (body.credentialId !== undefined) body.credentialId = binaryText(body.credentialId);
    return this.#server.request('POST', `${this.path}/autofill`, body);
  }

  /** `GET …/autofill`: whether a conditional sign-in is pending on this device. */
  async autofillPending() {
    return (await this.#server.request('GET', `${this.path}/autofill`)).pending;
  }

  /**
   * The passkeys the device holds now (what has synced to it included), newest last.
   *
   * Each is `{id, rpId, userHandle, userName, userDisplayName, createdAt, algorithm,
   * publicKeyAlgorithm, publicKey, aaguid, profile, backupEligible, backupState,
   * backupStateSetByHand, signCount, signCounter, userVerificationRequired, credProtect,
   * credBlobBytes, largeBlobBytes, hidden}`, `publicKey` the SPKI DER as base64url.
   *
   * @param {object} [filter]
   * @param {string} [filter.rpId] only this RP's
   * @returns {Promise<object[]>}
   */
  async passkeys({ rpId } = {}) {
    const query = rpId === undefined ? '' : `?rpId=${encodeURIComponent(rpId)}`;
    const { credentials } = await this.#server.request('GET', `${this.path}/passkeys${query}`);
    // The server filters by rpId; so does this, whatever the server does.
    return rpId === undefined ? credentials : credentials.filter((passkey) => passkey.rpId === rpId);
  }

  /**
   * One passkey the device holds (`404 notHandled` when it holds none with that id).
   *
   * @param {string | Uint8Array} id the credential id
   * @returns {Promise<object>}
   */
  passkey(id) {
    return this.#server.request('GET', `${this.path}/passkeys/${segment(binaryText(id))}`);
  }

  /**
   * Deletes a passkey on this device (the deletion syncs to the others).
   *
   * @param {string | Uint8Array} id
   * @returns {Promise<void>}
   */
  async deletePasskey(id) {
    await this.#server.request('DELETE', `${this.path}/passkeys/${segment(binaryText(id))}`);
  }

  /**
   * Sets a passkey's backup flags by hand (BE, BS).
   *
   * @param {string | Uint8Array} id
   * @param {{backupState: boolean, backupEligible?: boolean}} flags
   * @returns {Promise<object>} the passkey after
   */
  setBackupFlags(id, { backupState, backupEligible }) {
    return this.#server.request('PATCH', `${this.path}/passkeys/${segment(binaryText(id))}`, defined({ backupEligible, backupState }));
  }

  /**
   * Adds a passkey from its private key (WebDriver's Add Credential, WebAuthn §11.3).
   *
   * @param {object} passkey
   * @param {string | Uint8Array} passkey.credentialId
   * @param {string} passkey.rpId
   * @param {string | Uint8Array | import('node:crypto').KeyObject} passkey.privateKey PKCS #8 DER (as bytes or base64url) or a private `KeyObject`
   * @param {string | Uint8Array} passkey.userHandle
   * @param {string} [passkey.userName]
   * @param {string} [passkey.userDisplayName]
   * @param {number} [passkey.signCount]
   * @param {boolean} [passkey.backupEligibility] default true
   * @param {boolean} [passkey.backupState] default `backupEligibility`
   * @param {string | Uint8Array} [passkey.largeBlob]
   * @returns {Promise<object>} the passkey as {@link Device#passkeys} lists it
   */
  addPasskey({ credentialId, rpId, privateKey, userHandle, userName, userDisplayName, signCount, backupEligibility, backupState, largeBlob, isResidentCredential }) {
    const key = privateKey instanceof KeyObject ? privateKey.export({ format: 'der', type: 'pkcs8' }) : privateKey;
    const body = defined({
      credentialId: credentialId === undefined ? undefined : binaryText(credentialId),
      rpId,
      privateKey: key === undefined ? undefined : binaryText(key),
      userHandle: userHandle === undefined ? undefined : binaryText(userHandle),
      userName, userDisplayName, signCount, backupEligibility, backupState,
      largeBlob: largeBlob === undefined ? undefined : binaryText(largeBlob),
      isResidentCredential,
    });
    return this.#server.request('POST', `${this.path}/passkeys`, body);
  }

  /**
   * Exports one passkey sealed under a passphrase (user verification on this device first).
   *
   * @param {string | Uint8Array} id
   * @param {{passphrase: string, pin?: string}} settings
   * @returns {Promise<string>} the envelope, base64url
   */
  async exportPasskey(id, { passphrase, pin }) {
    return (await this.#server.request('POST', `${this.path}/passkeys/${segment(binaryText(id))}/export`, defined({ passphrase, pin }))).envelope;
  }

  /**
   * Imports a passkey from {@link Device#exportPasskey}'s envelope.
   *
   * @param {{envelope: string | Uint8Array, passphrase: string, pin?: string}} settings
   * @returns {Promise<object>} the passkey
   */
  importPasskey({ envelope, passphrase, pin }) {
    return this.#server.request('POST', `${this.path}/import`, defined({ envelope: binaryText(envelope), passphrase, pin }));
  }

  /** Takes the device offline: nothing starts uploading or downloading until it is back. Resolves with its state. */
  offline() {
    return this.#server.request('POST', `${this.path}/offline`);
  }

  /** Brings the device back online: what waited syncs from now. Resolves with its state. */
  online() {
    return this.#server.request('POST', `${this.path}/online`);
  }

  /** A factory reset: its replica and PIN are gone; the account's passkeys come back as sync delivers them. Resolves with its state. */
  reset() {
    return this.#server.request('POST', `${this.path}/reset`);
  }

  /** Clears a biometric lockout. Resolves with its state. */
  unlock() {
    return this.#server.request('POST', `${this.path}/unlock`);
  }

  /**
   * Switches passkey support off (a browser without WebAuthn: ceremonies fail
   * `passkeysNotSupported`) or back on. Resolves with its state.
   *
   * @param {boolean} supported
   */
  setPasskeysSupported(supported) {
    return this.#server.request('POST', `${this.path}/${supported ? 'supported' : 'unsupported'}`);
  }

  /** Removes the device from the account (not the first device, which holds the account). */
  async remove() {
    await this.#server.request('DELETE', this.path);
  }

  /**
   * Enrolls a new biometric PIN: with `currentPin` (the PIN typed now), or after a `reset` with
   * `approvedBy` another device (and `approverPin`). The server types the new PIN for this device
   * from then on.
   *
   * @param {string} pin
   * @param {{currentPin?: string, reset?: boolean, approvedBy?: string, approverPin?: string}} [settings]
   * @returns {Promise<{device: object, deletedPasskeys: number}>}
   */
  setPin(pin, { currentPin, reset, approvedBy, approverPin } = {}) {
    return this.#server.request('POST', `${this.path}/pin`, defined({ pin, currentPin, reset, approvedBy, approverPin }));
  }

  /**
   * Sets the device's authenticator profile (`authctl profiles`) and, optionally, its AAGUID.
   *
   * @param {string} profile
   * @param {{aaguid?: string}} [settings]
   * @returns {Promise<object>} its state
   */
  setProfile(profile, { aaguid } = {}) {
    return this.#server.request('PUT', `${this.path}/profile`, defined({ profile, aaguid }));
  }

  /**
   * What `PublicKeyCredential.getClientCapabilities()` gives a page on this device, and the two
   * older availability checks.
   *
   * @returns {Promise<{capabilities: object, isUserVerifyingPlatformAuthenticatorAvailable: boolean, isConditionalMediationAvailable: boolean}>}
   */
  capabilities() {
    return this.#server.request('GET', `${this.path}/capabilities`);
  }

  /**
   * An RP's signal (`PublicKeyCredential.signalUnknownCredential()` and the others) received on
   * this device.
   *
   * @param {'unknownCredential' | 'allAcceptedCredentials' | 'currentUserDetails'} kind
   * @param {object} options the signal's options (`{rpId, credentialId}`, `{rpId, userId, allAcceptedCredentialIds}`,
   *   `{rpId, userId, name, displayName}`)
   * @param {string} origin the calling page's origin
   * @returns {Promise<{removed: string[], hidden: string[], restored: string[], updated: string[]}>} the passkey ids affected
   */
  signal(kind, options, origin) {
    return this.#server.request('POST', `${this.path}/signals/${segment(kind)}`, { options, origin });
  }
}
