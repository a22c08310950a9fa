// The audit through the server: startAudit/audit, a report's findings, JUnit, cancel.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { AuditFailedError, assertNoFindings, auditFindings } from '../src/index.mjs';
import { startBank, startServer } from '../test-support/helpers.mjs';

describe('audits', () => {
  let served, bank, flawed;
  before(async () => {
    served = await startServer();
    bank = await startBank();
    flawed = await startBank({ flaws: ['challenge-not-consumed'] });
  });
  after(async () => {
    await bank?.stop();
    await flawed?.stop();
    await served?.stop();
  });

  test('a bank without flaws: every case refused, no finding', async () => {
    const report = await served.server.audit(bank.url, { preset: 'rp-server', rate: 1000 });
    assert.ok(report.results.length >= 45);
    assert.deepEqual(auditFindings(report), []);
    assertNoFindings(report);
  });

  test('a flaw is found by exactly its cases, with the exchanges that show it, and JUnit says so', async () => {
    const running = await served.server.startAudit(flawed.url, { preset: 'rp-server', rate: 1000, only: ['replay'] });
    assert.equal(running.last.state, 'running');
    const report = await running.wait();
    assert.deepEqual(auditFindings(report).map((r) => r.id).sort(), ['reg-replay', 'sign-replay']);
    assert.ok(auditFindings(report).every((r) => r.exchanges.length > 0));
    assert.throws(() => assertNoFindings(report), /2 findings .*\n {2}reg-replay: ACCEPTED/);
    assert.doesNotThrow(() => assertNoFindings(report, 'server-error'));
    const xml = await running.junit();
    assert.match(xml, /<testsuite [^>]*tests="5"[^>]*failures="2"/);
    const page = await running.html();
    assert.match(page, /^<!DOCTYPE html>/);
    assert.match(page, /<section id="sign-replay">/);
  });

  test('a running audit stops when canceled; a bad request is a 400', async () => {
    const running = await served.server.startAudit(bank.url, { preset: 'rp-server', rate: 2 });
    await running.cancel();
    await assert.rejects(running.wait(), (error) => error instanceof AuditFailedError && error.name === 'canceled');
    await assert.rejects(served.server.startAudit('ftp://rp.example', { preset: 'rp-server' }), (error) => error.status === 400);
  });
});
