import { test } from '@japa/runner'
import { auditRow } from '#tests/helpers/audit_rows'
import {
  actionFilterOptions,
  actionLabel,
  auditDiff,
  presentAuditRow,
} from '#services/admin/audit_presenter'

test.group('Audit page: changes as lines', () => {
  test('only the fields that changed, nested options flattened, arrays compared whole', ({
    assert,
  }) => {
    const before = {
      enabled: true,
      confirmations: 12,
      rpcUrls: ['https://a.example'],
      apiKey: '',
      options: { blockRange: 1000, chainId: 1 },
    }
    const after = {
      enabled: false,
      confirmations: 12,
      rpcUrls: ['https://b.example/***'],
      apiKey: '…9f3k',
      options: { blockRange: 500, chainId: 1 },
    }
    assert.deepEqual(auditDiff(before, after), [
      { path: 'enabled', before: 'true', after: 'false', change: 'changed' },
      {
        path: 'rpcUrls',
        before: '["https://a.example"]',
        after: '["https://b.example/***"]',
        change: 'changed',
      },
      { path: 'apiKey', before: '""', after: '…9f3k', change: 'changed' },
      { path: 'options.blockRange', before: '1000', after: '500', change: 'changed' },
    ])
  })

  test('a field that appears or goes away', ({ assert }) => {
    assert.deepEqual(auditDiff({ a: 1 }, { a: 1, b: null }), [
      { path: 'b', before: null, after: 'null', change: 'added' },
    ])
    assert.deepEqual(auditDiff({ a: 1, gone: 'x' }, { a: 1 }), [
      { path: 'gone', before: 'x', after: null, change: 'removed' },
    ])
  })

  test('created (no before) and removed (no after): every field listed once', ({ assert }) => {
    assert.deepEqual(auditDiff(null, { email: 'a@b.test', role: 'viewer' }), [
      { path: 'email', before: null, after: 'a@b.test', change: 'added' },
      { path: 'role', before: null, after: 'viewer', change: 'added' },
    ])
    assert.deepEqual(auditDiff({ address: 'T1' }, null), [
      { path: 'address', before: 'T1', after: null, change: 'removed' },
    ])
  })

  test('times (fields named …At or …_at holding epoch ms) read as UTC dates; other numbers stay numbers', ({
    assert,
  }) => {
    const at = Date.UTC(2025, 5, 15, 12, 30, 5)
    assert.deepEqual(
      auditDiff(
        { passwordChangedAt: at - 1000, count: at },
        { passwordChangedAt: at, count: at + 1, last_used_at: at }
      ),
      [
        {
          path: 'passwordChangedAt',
          before: '2025-06-15 12:30:04 UTC',
          after: '2025-06-15 12:30:05 UTC',
          change: 'changed',
        },
        { path: 'count', before: String(at), after: String(at + 1), change: 'changed' },
        { path: 'last_used_at', before: null, after: '2025-06-15 12:30:05 UTC', change: 'added' },
      ]
    )
    assert.deepEqual(auditDiff({ totpEnabledAt: null }, { totpEnabledAt: 5 }), [
      { path: 'totpEnabledAt', before: 'null', after: '5', change: 'changed' },
    ])
  })

  test('plain values (a setting) give one line without a path; equal values none', ({ assert }) => {
    assert.deepEqual(auditDiff(15, 20), [
      { path: '', before: '15', after: '20', change: 'changed' },
    ])
    assert.deepEqual(auditDiff('', 'Shop'), [
      { path: '', before: '""', after: 'Shop', change: 'changed' },
    ])
    assert.deepEqual(auditDiff('***', '***'), [])
    assert.deepEqual(auditDiff(null, null), [])
  })
})

test.group('Audit page: rows in words', () => {
  test('sign-in events read as such, with their tone', ({ assert }) => {
    assert.deepEqual(actionLabel('auth.login'), { label: 'Signed in', tone: 'success' })
    assert.deepEqual(actionLabel('auth.login_failed'), { label: 'Sign-in failed', tone: 'danger' })
    assert.deepEqual(actionLabel('auth.logout'), { label: 'Signed out', tone: 'neutral' })
    assert.deepEqual(actionLabel('auth.2fa_failed'), {
      label: 'Two-factor sign-in: failed',
      tone: 'danger',
    })
    assert.deepEqual(actionLabel('auth.2fa_recovery_used'), {
      label: 'Two-factor sign-in: recovery used',
      tone: 'neutral',
    })
  })

  test('an action it does not know is shown from its name', ({ assert }) => {
    assert.deepEqual(actionLabel('order.refund'), { label: 'Order: refund', tone: 'neutral' })
    assert.deepEqual(actionLabel('unmatched.split_up'), {
      label: 'Unmatched: split up',
      tone: 'neutral',
    })
    assert.deepEqual(actionLabel('wallet.import_failed'), {
      label: 'Wallet: import failed',
      tone: 'danger',
    })
    assert.deepEqual(actionLabel('plain'), { label: 'Plain', tone: 'neutral' })
  })

  test('a failed sign-in row (as the console writes it): nobody signed in, the e-mail tried, the details as a list', ({
    assert,
  }) => {
    const view = presentAuditRow(
      auditRow({
        actorKind: 'visitor',
        actorUserId: null,
        actor: 'anonymous',
        action: 'auth.login_failed',
        subjectType: 'user',
        subjectId: '',
        after: { email: 'ops@example.test', reason: 'wrong e-mail or password' },
      })
    )
    assert.deepEqual(view.actor, { label: 'Not signed in', kind: 'visitor', detail: 'visitor' })
    assert.deepEqual(view.action, {
      name: 'auth.login_failed',
      label: 'Sign-in failed',
      tone: 'danger',
    })
    assert.equal(view.subject.label, 'Sign-in as ops@example.test')
    assert.equal(view.shape, 'created')
    assert.deepEqual(
      view.changes.map((line) => [line.path, line.after]),
      [
        ['email', 'ops@example.test'],
        ['reason', 'wrong e-mail or password'],
      ]
    )
    assert.deepInclude(view, { ip: '203.0.113.9', requestId: 'req-1' })
  })

  test('a sign-in: the user by e-mail and id, the method', ({ assert }) => {
    const view = presentAuditRow(
      auditRow({
        action: 'auth.login',
        subjectType: 'user',
        subjectId: '3',
        after: { email: 'ops@example.test', method: 'totp' },
      })
    )
    assert.deepEqual(view.actor, { label: 'ops@example.test', kind: 'user', detail: 'console' })
    assert.equal(view.subject.label, 'Admin user ops@example.test (#3)')
    assert.deepInclude(view.changes, {
      path: 'method',
      before: null,
      after: 'totp',
      change: 'added',
    })
  })

  test('a shell change and a change without snapshots', ({ assert }) => {
    const shell = presentAuditRow(
      auditRow({
        actorKind: 'ace',
        actor: 'ace:deploy',
        before: { enabled: true },
        after: { enabled: false },
      })
    )
    assert.deepEqual(shell.actor, { label: 'deploy', kind: 'ace', detail: 'shell (node ace)' })
    assert.equal(shell.shape, 'changed')
    assert.equal(shell.subject.label, 'Chain ethereum')
    assert.equal(shell.subject.href, '/admin/chains/ethereum')
    const bare = presentAuditRow(
      auditRow({ action: 'auth.logout', subjectType: 'user', subjectId: '3' })
    )
    assert.equal(bare.shape, 'none')
    assert.deepEqual(bare.changes, [])
    assert.equal(bare.subject.label, 'Admin user 3')
    assert.isNull(bare.subject.href)
    const subject = (subjectType: string, subjectId: string) =>
      presentAuditRow(auditRow({ subjectType, subjectId })).subject.href
    assert.equal(subject('order', 'T0123456789abcdef'), '/admin/orders/T0123456789abcdef')
    assert.equal(subject('api_key', '1000'), '/admin/api-keys/1000')
    assert.equal(subject('token', 'tron/USDT'), '/admin/chains/tron/tokens/USDT')
    assert.equal(subject('setting', 'order.expiration_minutes'), '/admin/settings/orders')
    assert.equal(subject('setting', 'provider.shop_token'), '/admin/settings/provider')
    assert.isNull(subject('setting', 'acme.unknown'))
    assert.equal(subject('rate', 'USDT/CNY'), '/admin/settings/rates')
    assert.equal(subject('unmatched_payment', '12'), '/admin/unmatched/12')
    assert.isNull(subject('order', ''))
  })

  test('filter options: a group per kind with an "all" entry; an unknown current value is kept', ({
    assert,
  }) => {
    const groups = actionFilterOptions()
    const signIn = groups.find((group) => group.label === 'Sign-in')!
    assert.deepEqual(signIn.options[0], { value: 'auth.*', label: 'Sign-in: all' })
    assert.deepInclude(signIn.options, { value: 'auth.login_failed', label: 'Sign-in failed' })
    assert.deepInclude(signIn.options, { value: 'auth.2fa_*', label: 'Two-factor sign-in steps' })
    assert.isUndefined(groups.find((group) => group.label === 'Other'))
    const withOther = actionFilterOptions('plugin.thing')
    assert.deepEqual(withOther.at(-1), {
      label: 'Other',
      options: [{ value: 'plugin.thing', label: 'plugin.thing' }],
    })
    assert.isUndefined(actionFilterOptions('auth.*').find((group) => group.label === 'Other'))
  })
})
