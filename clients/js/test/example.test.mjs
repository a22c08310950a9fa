// The worked example (examples/bank.mjs) runs end to end against the example bank and exits 0.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), '..', 'examples', 'bank.mjs');

test('examples/bank.mjs: password, passkey on the phone, sync to the laptop, sign-in there, a forged signature refused', async () => {
  const { code, stdout, stderr } = await new Promise((resolve) => {
    execFile(process.execPath, [EXAMPLE], { timeout: 180_000, env: process.env }, (error, out, err) => {
      resolve({ code: error ? (error.code ?? error.signal) : 0, stdout: out, stderr: err });
    });
  });
  assert.equal(code, 0, `the example failed (${code}):\n${stdout}\n${stderr}`);
  for (const expected of [
    /budi signs in with his password/,
    /the phone makes a passkey \([A-Za-z0-9_-]+\); the bank verifies it/,
    /the laptop has no passkey yet: its sign-in is NotAllowedError/,
    /arrives on the laptop at 2026-01-01T09:00:05\.000Z \(syncArrived\)/,
    /signs in on the laptop with the synced passkey/,
    /transfer of 250000 is approved/,
    /broken signature is refused: HTTP 400/,
    /done: authctl serve stopped with exit 0/,
  ]) {
    assert.match(stdout, expected);
  }
  // Nothing on standard error but Node's own notices (Node 18 calls fetch experimental).
  const unexpected = stderr.split('\n').filter((line) => line.trim() && !/ExperimentalWarning|--trace-warnings/.test(line));
  assert.deepEqual(unexpected, [], stderr);
});
