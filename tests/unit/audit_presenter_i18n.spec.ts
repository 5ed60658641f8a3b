import { test } from '@japa/runner'
import i18nManager from '@adonisjs/i18n/services/main'
import type { AuditRow } from '#services/audit/audit_log'
import { auditRow } from '#tests/helpers/audit_rows'
import {
  actionFilterOptions,
  actionLabel,
  presentAuditRow,
  subjectTypeOptions,
} from '#services/admin/audit_presenter'

/** The shared audit row, ethereum's change from enabled to disabled unless told. */
function row(overrides: Partial<AuditRow>): AuditRow {
  return auditRow({ before: { enabled: true }, after: { enabled: false }, ...overrides })
}

const ROWS = [
  row({}),
  row({
    actorKind: 'ace',
    actor: 'ace:root',
    action: 'user.2fa_reset',
    subjectType: 'user',
    subjectId: '4',
    after: { email: 'a@example.test' },
  }),
  row({
    actorKind: 'visitor',
    actor: 'anonymous',
    action: 'auth.login_failed',
    subjectType: 'user',
    subjectId: '',
    after: { email: 'x@example.test' },
  }),
  row({
    actorKind: 'system',
    actor: 'system',
    action: 'auth.2fa_locked',
    subjectType: 'plugin_thing',
    subjectId: '',
  }),
  row({ action: 'order.mark_paid', subjectType: 'order', subjectId: 'T1' }),
  row({ action: 'plugin.did_something', subjectType: 'setting', subjectId: 'rate.sources' }),
]

test.group('Audit page in the admin’s language', () => {
  test('the English catalogue says what the presenter says without an i18n', ({ assert }) => {
    const en = i18nManager.locale('en')
    assert.deepEqual(actionFilterOptions(undefined, en), actionFilterOptions())
    assert.deepEqual(actionFilterOptions('x.y', en), actionFilterOptions('x.y'))
    assert.deepEqual(subjectTypeOptions(en), subjectTypeOptions())
    for (const item of ROWS) assert.deepEqual(presentAuditRow(item, en), presentAuditRow(item))
    assert.equal(actionLabel('auth.2fa_locked', en).label, 'Two-factor sign-in: locked')
  })

  test('in Chinese: actions, groups, subjects and actors in words; values untouched', ({
    assert,
  }) => {
    const zh = i18nManager.locale('zh-CN')
    const groups = actionFilterOptions('plugin.x', zh)
    assert.equal(groups[0].label, '登录')
    assert.deepEqual(groups[0].options[0], { value: 'auth.*', label: '登录：全部' })
    assert.deepEqual(groups.at(-1), {
      label: '其他',
      options: [{ value: 'plugin.x', label: 'plugin.x' }],
    })
    assert.deepInclude(subjectTypeOptions(zh), { value: 'order', label: '订单' })
    const [chain, reset, failed, system, order] = ROWS.map((item) => presentAuditRow(item, zh))
    assert.equal(chain.action.label, '修改链')
    assert.equal(chain.action.name, 'chain.update')
    assert.equal(chain.subject.label, '链 ethereum')
    assert.equal(chain.actor.detail, '控制台')
    assert.equal(reset.actor.detail, '命令行（node ace）')
    assert.equal(reset.subject.label, '管理员 a@example.test（#4）')
    assert.equal(failed.actor.label, '未登录')
    assert.equal(failed.subject.label, '以 x@example.test 登录')
    assert.equal(system.actor.label, '网关')
    assert.equal(order.action.label, '订单标记为已支付')
    assert.deepEqual(chain.changes, presentAuditRow(ROWS[0]).changes)
  })
})
