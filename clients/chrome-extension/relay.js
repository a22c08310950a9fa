// Between page.js (the page's world) and the extension: a question from this frame goes to the
// service worker, which learns the frame's origin from Chrome; its answer comes back.
window.addEventListener('message', async (event) => {
  const data = event.data;
  if (event.source !== window || !data || data.channel !== 'authctl-passkeys' || data.direction !== 'ask') return;
  let answer;
  try {
    answer = await chrome.runtime.sendMessage({ kind: data.kind, options: data.options });
  } catch (error) {
    answer = { error: { name: 'NotAllowedError', message: `authctl passkeys: ${error}` } };
  }
  window.postMessage({ channel: 'authctl-passkeys', direction: 'answer', id: data.id, ...answer }, '*');
});
