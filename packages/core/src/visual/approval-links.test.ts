import { deriveKeys, signViewToken } from '../secrets/seal';
import { signViewLink } from '../view-links';
import { APPROVAL_LINK_TTL_MS, approvalUrl, checkApprovalLink, signApprovalLink } from './approval-links';

const keys = deriveKeys('s'.repeat(40));
const grant = { subject: 'run' as const, id: 'run_01', keyId: 'key_01' };
const issuedAt = new Date('2026-12-07T10:00:00Z');
const inTen = new Date(issuedAt.getTime() + 10 * 60_000);

describe('approval links', () => {
  it('work for an hour from their issue, for their subject, id, key and link version only', () => {
    const token = signApprovalLink(keys.approval, grant, 0, issuedAt);
    expect(token).toMatch(/^[0-9a-z]+~[A-Za-z0-9_-]{32}$/);
    expect(checkApprovalLink(keys.approval, grant, token, 0, inTen)).toEqual(
      new Date(issuedAt.getTime() + APPROVAL_LINK_TTL_MS),
    );
    const justAfter = new Date(issuedAt.getTime() + APPROVAL_LINK_TTL_MS + 1_000);
    expect(checkApprovalLink(keys.approval, grant, token, 0, justAfter)).toBeNull();
    for (const other of [
      { ...grant, id: 'run_02' },
      { ...grant, keyId: 'key_02' },
      { ...grant, subject: 'suite-run' as const },
    ])
      expect(checkApprovalLink(keys.approval, other, token, 0, inTen)).toBeNull();
    // The subject's links revoked (its version bumped): the approval link ends too.
    expect(checkApprovalLink(keys.approval, grant, token, 1, inTen)).toBeNull();
  });

  it('cannot be made longer by moving the issue time, nor issued in the future', () => {
    const token = signApprovalLink(keys.approval, grant, 0, issuedAt);
    const [, macPart] = token.split('~');
    const later = Math.floor(inTen.getTime() / 1000).toString(36);
    expect(checkApprovalLink(keys.approval, grant, `${later}~${macPart ?? ''}`, 0, inTen)).toBeNull();
    const future = signApprovalLink(keys.approval, grant, 0, new Date(inTen.getTime() + 30 * 60_000));
    expect(checkApprovalLink(keys.approval, grant, future, 0, inTen)).toBeNull();
  });

  it('are never a view link, and a view link is never one', () => {
    const viewLink = signViewLink(keys.view, 'run', grant.id, { issuedAt, version: 0 });
    expect(checkApprovalLink(keys.approval, grant, viewLink, 0, inTen)).toBeNull();
    expect(checkApprovalLink(keys.approval, grant, signViewToken(keys.view, 'run', grant.id), 0, inTen)).toBeNull();
    // The same input signed with the view key does not pass: the keys differ.
    expect(
      checkApprovalLink(keys.approval, grant, signApprovalLink(keys.view, grant, 0, issuedAt), 0, inTen),
    ).toBeNull();
    for (const bad of ['', '~', 'x'.repeat(60), `${'z'.repeat(12)}~${'a'.repeat(32)}`, `a~${'a'.repeat(31)}`])
      expect(checkApprovalLink(keys.approval, grant, bad, 0, inTen)).toBeNull();
  });

  it('are addressed under the view, naming the key they were issued to', () => {
    const { url, expiresAt } = approvalUrl('https://t.example', keys.approval, grant, 0, issuedAt);
    expect(url).toMatch(/^https:\/\/t\.example\/view\/approve\/runs\/run_01\/key_01\/[0-9a-z]+~[A-Za-z0-9_-]{32}$/);
    expect(expiresAt).toEqual(new Date(issuedAt.getTime() + APPROVAL_LINK_TTL_MS));
    const suite = approvalUrl('https://t.example', keys.approval, { ...grant, subject: 'suite-run' }, 0, issuedAt);
    expect(suite.url).toContain('/view/approve/suite-runs/run_01/key_01/');
  });
});
