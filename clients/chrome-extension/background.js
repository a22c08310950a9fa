// authctl passkeys: this browser's WebAuthn requests — navigator.credentials.create() and get()
// for publicKey, and isUserVerifyingPlatformAuthenticatorAvailable() — answered by a device of
// authctl serve, through chrome.webAuthenticationProxy (docs/browser.md). Chrome hands the
// extension each request as its options JSON, with the calling origin it established itself in
// extensions.remoteDesktopClientOverride; the extension posts them to the server and completes
// the request with the response JSON (what toJSON() gives) or the error the server named.
const proxy = chrome.webAuthenticationProxy;
const inFlight = new Map();  // requestId -> AbortController

// The server and device: chrome.storage.local's "authctl" (the options page sets it), else the
// config.json packed with the extension. {server, token, account, device}.
async function settings() {
  const stored = (await chrome.storage.local.get('authctl')).authctl;
  if (stored && stored.server) return stored;
  try {
    const response = await fetch(chrome.runtime.getURL('config.json'), { cache: 'no-store' });
    if (response.ok) return await response.json();
  } catch {
    // no config.json: not configured
  }
  return null;
}

function endpoint(config, path) {
  return `${config.server.replace(/\/$/, '')}/accounts/${encodeURIComponent(config.account)}/devices/${encodeURIComponent(config.device)}${path}`;
}

async function serverCall(config, method, path, body, signal) {
  const response = await fetch(endpoint(config, path), {
    method, signal, cache: 'no-store',
    headers: body === undefined ? { Authorization: `Bearer ${config.token}` }
      : { Authorization: `Bearer ${config.token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { ok: response.ok, status: response.status, text, json: text ? JSON.parse(text) : null };
}

// The top-level origin of a request from a cross-origin frame: Chrome says only that the frame
// is not same-origin with its ancestors, so it is the origin of the tab the request came from.
async function topOrigin() {
  const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  try { return tab && tab.url ? new URL(tab.url).origin : undefined; } catch { return undefined; }
}

function failure(name, message) {
  return { name, message };
}

async function forward(kind, requestId, detailsJson) {
  const controller = new AbortController();
  inFlight.set(requestId, controller);
  try {
    const options = JSON.parse(detailsJson);
    const override = options.extensions && options.extensions.remoteDesktopClientOverride;
    if (!override || typeof override.origin !== 'string') {
      return { error: failure('NotAllowedError', 'the request carries no caller origin from the browser') };
    }
    delete options.extensions.remoteDesktopClientOverride;
    if (Object.keys(options.extensions).length === 0) delete options.extensions;
    const config = await settings();
    if (!config) return { error: failure('NotAllowedError', 'authctl passkeys is not configured: set the server, token, account and device in its options') };
    const body = { options, origin: override.origin };
    if (override.sameOriginWithAncestors === false) {
      const top = await topOrigin();
      if (top && top !== override.origin) body.topOrigin = top;
    }
    const answer = await serverCall(config, 'POST', `/${kind}`, body, controller.signal);
    if (answer.ok) return { responseJson: answer.text };
    const problem = answer.json || {};
    return { error: failure(problem.domException && problem.domException !== 'TypeError' ? problem.domException : 'NotAllowedError',
      problem.detail || `authctl serve answered ${answer.status}`) };
  } catch (error) {
    if (controller.signal.aborted) return null;  // canceled: Chrome expects no completion
    return { error: failure('NotAllowedError', `authctl serve is not reachable: ${error}`) };
  } finally {
    inFlight.delete(requestId);
  }
}

proxy.onCreateRequest.addListener(async ({ requestId, requestDetailsJson }) => {
  const outcome = await forward('register', requestId, requestDetailsJson);
  if (outcome) await proxy.completeCreateRequest({ requestId, ...outcome });
});

proxy.onGetRequest.addListener(async ({ requestId, requestDetailsJson }) => {
  const outcome = await forward('sign', requestId, requestDetailsJson);
  if (outcome) await proxy.completeGetRequest({ requestId, ...outcome });
});

proxy.onIsUvpaaRequest.addListener(async ({ requestId }) => {
  let isUvpaa = false;
  try {
    const config = await settings();
    if (config) {
      const answer = await serverCall(config, 'GET', '/capabilities');
      isUvpaa = answer.ok && answer.json.isUserVerifyingPlatformAuthenticatorAvailable === true;
    }
  } finally {
    await proxy.completeIsUvpaaRequest({ requestId, isUvpaa });
  }
});

proxy.onRequestCanceled.addListener((requestId) => {
  const controller = inFlight.get(requestId);
  if (controller) controller.abort();
});

// What the proxy does not carry, asked by page.js through relay.js: getClientCapabilities() and
// the signals, for the origin Chrome says the asking frame has.
async function answerPage(message, sender) {
  const origin = sender.origin;
  if (!origin || origin === 'null') return { error: failure('SecurityError', 'the frame has no origin') };
  const config = await settings();
  if (!config) return { error: failure('NotAllowedError', 'authctl passkeys is not configured') };
  if (message.kind === 'capabilities') {
    const answer = await serverCall(config, 'GET', '/capabilities');
    if (!answer.ok) return { error: failure('NotAllowedError', (answer.json && answer.json.detail) || `authctl serve answered ${answer.status}`) };
    // Chrome does not hand conditional requests to a proxy: the page cannot have them here.
    return { value: { ...answer.json.capabilities, conditionalGet: false, conditionalCreate: false } };
  }
  if (['unknownCredential', 'allAcceptedCredentials', 'currentUserDetails'].includes(message.kind)) {
    const answer = await serverCall(config, 'POST', `/signals/${message.kind}`, { options: message.options, origin });
    if (answer.ok) return { value: null };
    const problem = answer.json || {};
    return { error: failure(problem.domException || 'NotAllowedError', problem.detail || `authctl serve answered ${answer.status}`) };
  }
  return { error: failure('NotSupportedError', `unknown request ${message.kind}`) };
}

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  answerPage(message, sender).then(sendResponse,
    (error) => sendResponse({ error: failure('NotAllowedError', `authctl serve is not reachable: ${error}`) }));
  return true;  // the answer comes later
});

// The extension answers for the browser from the moment it starts.
proxy.attach().then((error) => {
  if (error) console.warn(`authctl passkeys: ${error}`);
});
