// The browser's side of Tests/interop/test_chromium.py: the options JSON goes through
// parseCreationOptionsFromJSON / parseRequestOptionsFromJSON and navigator.credentials.create/get,
// exactly as a page would call them. The outcome is "ok" (with the response's toJSON()), the
// DOMException's name, or "pending" when the promise has not settled after pendingMs (the request
// is then aborted, and its rejection awaited, so that the next call starts on a clean frame).
// `ms` is how long a settled call took (for the report, never asserted on).
"use strict";

window.differential = async function (kind, optionsJSON, outer, pendingMs) {
  const controller = new AbortController();
  const started = performance.now();
  const call = (async () => {
    const parse = kind === "create"
      ? PublicKeyCredential.parseCreationOptionsFromJSON
      : PublicKeyCredential.parseRequestOptionsFromJSON;
    const publicKey = parse(optionsJSON);
    const request = Object.assign({ publicKey, signal: controller.signal }, outer || {});
    return kind === "create" ? navigator.credentials.create(request) : navigator.credentials.get(request);
  })();
  const settled = call.then(
    (credential) => ({ outcome: "ok", response: credential.toJSON() }),
    // authctl: the page bridge's own name for the error (docs/errors.md), when it answered.
    (error) => ({ outcome: error && error.name ? error.name : String(error), message: String(error && error.message),
                  authctl: globalThis.__authctlBridge ? __authctlBridge.errorName(error) : null }));
  let timer;
  const pending = new Promise((resolve) => { timer = setTimeout(() => resolve({ outcome: "pending" }), pendingMs); });
  const first = await Promise.race([settled, pending]);
  clearTimeout(timer);
  if (first.outcome === "pending") {
    controller.abort();
    const late = await settled;  // AbortError once the request is torn down
    first.afterAbort = late.outcome;
  } else {
    first.ms = Math.round(performance.now() - started);
  }
  return first;
};
