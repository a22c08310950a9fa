// The options page: the server, token, account and device the extension answers with, kept in
// chrome.storage.local (they take precedence over a config.json packed with the extension).
const fields = ['server', 'token', 'account', 'device'];
const form = document.getElementById('settings');

chrome.storage.local.get('authctl').then(({ authctl }) => {
  for (const name of fields) document.getElementById(name).value = (authctl && authctl[name]) || '';
});

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const settings = Object.fromEntries(fields.map((name) => [name, document.getElementById(name).value.trim()]));
  await chrome.storage.local.set({ authctl: settings });
  document.getElementById('status').textContent = 'Saved.';
});
