import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { userInfo } from 'node:os'
import auditLog, { AuditLog } from '#services/audit/audit_log'
import { actingAs } from '#services/audit/audit_context'
import rateAdmin from '#services/operators/rate_admin'
import { countRows, emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { runCommand } from '#tests/helpers/ace_command'
import ApiKeyCreate from '#commands/apikey_create'
import ApiKeyRotate from '#commands/apikey_rotate'
import ApiKeySet from '#commands/apikey_set'
import ChainSet from '#commands/chain_set'
import TokenSet from '#commands/token_set'
import WalletAdd from '#commands/wallet_add'
import WalletRemove from '#commands/wallet_remove'
import RateSet from '#commands/rate_set'
import SettingsSet from '#commands/settings_set'
import AdminCreate from '#commands/admin_create'
import AdminPassword from '#commands/admin_password'
import AdminRole from '#commands/admin_role'
import Admin2faReset from '#commands/admin_2fa_reset'

const ACE = `ace:${userInfo().username}`
const EVM_WALLET = '0x52908400098527886e0f7030069857d2e4169ee7'
/** The canonical (checksummed) form the service stores and audits. */
const EVM_CANONICAL = '0x52908400098527886E0F7030069857D2E4169EE7'

/** A fresh installation without the audit rows of its own creation (tested apart). */
async function freshInstallation() {
  await resetDatabase()
  await emptyAuditLog()
}

/** Every stored audit row, as text: what a database dump would show. */
async function auditText() {
  return JSON.stringify(await db.from('audit_log').select('*'))
}

async function onlyRow() {
  const rows = await db.from('audit_log').select('*')
  return rows.map((row) => ({
    ...row,
    before: row.before === null ? null : JSON.parse(row.before),
    after: row.after === null ? null : JSON.parse(row.after),
  }))
}

async function ok(command: Parameters<typeof runCommand>[0], argv: string[]) {
  const result = await runCommand(command, argv)
  if (result.exitCode !== 0) throw new Error(`${argv.join(' ')}: ${result.output}`)
  return result
}

test.group('Audit log: each change through the services writes one row', (group) => {
  group.each.setup(() => freshInstallation())

  test('API keys: create, rotate, update; the secret is masked, never stored', async ({
    assert,
  }) => {
    const secret = 'shop7-secret-0123456789-wxyz'
    await ok(ApiKeyCreate, ['--pid=shop7', `--secret=${secret}`])
    const [created] = await onlyRow()
    assert.deepInclude(created, {
      actor: ACE,
      actor_kind: 'ace',
      action: 'api_key.create',
      subject_type: 'api_key',
      subject_id: 'shop7',
    })
    assert.isNull(created.before)
    assert.equal(created.after.secretKey, '…wxyz')

    const rotated = await ok(ApiKeyRotate, ['shop7'])
    const newSecret = rotated.output.match(/[0-9a-f]{64}/)![0]
    await ok(ApiKeySet, ['shop7', '--disable'])
    const rows = await onlyRow()
    assert.deepEqual(
      rows.map((row) => row.action),
      ['api_key.create', 'api_key.rotate', 'api_key.update']
    )
    assert.equal(rows[1].before.secretKey, '…wxyz')
    assert.equal(rows[1].after.secretKey, `…${newSecret.slice(-4)}`)
    assert.deepEqual([rows[2].before.status, rows[2].after.status], ['active', 'disabled'])
    const text = await auditText()
    assert.notInclude(text, secret)
    assert.notInclude(text, newSecret)
  })

  test('chains: the RPC API key and a key in an RPC URL are masked', async ({ assert }) => {
    const apiKey = 'rpc-key-abcdef0123456789-9f3k'
    const urlKey = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6'
    await ok(ChainSet, [
      'ethereum',
      `--api-key=${apiKey}`,
      `--rpc=https://mainnet.example/v3/${urlKey}`,
      '--confirmations=20',
    ])
    const [row] = await onlyRow()
    assert.deepInclude(row, {
      action: 'chain.update',
      subject_type: 'chain',
      subject_id: 'ethereum',
      actor: ACE,
    })
    assert.equal(row.before.apiKey, '')
    assert.equal(row.after.apiKey, '…9f3k')
    assert.equal(row.after.confirmations, 20)
    assert.notEqual(row.before.confirmations, 20)
    assert.deepEqual(row.after.rpcUrls, ['https://mainnet.example/v3/***'])
    const text = await auditText()
    assert.notInclude(text, apiKey)
    assert.notInclude(text, urlKey)
  })

  test('tokens, wallets (add, remove) and rates', async ({ assert }) => {
    await ok(TokenSet, ['tron', 'usdt', '--precision=4'])
    await ok(WalletAdd, ['ethereum', EVM_WALLET])
    await ok(WalletRemove, ['ethereum', EVM_WALLET])
    await ok(RateSet, ['usdt', 'cny', '7.25'])
    await ok(RateSet, ['usdt', 'cny', '7.5'])
    const rows = await onlyRow()
    assert.deepEqual(
      rows.map((row) => [row.action, row.subject_type, row.subject_id]),
      [
        ['token.update', 'token', 'tron/USDT'],
        ['wallet.add', 'wallet', `ethereum/${EVM_CANONICAL}`],
        ['wallet.remove', 'wallet', `ethereum/${EVM_CANONICAL}`],
        ['rate.set', 'rate', 'USDT/CNY'],
        ['rate.set', 'rate', 'USDT/CNY'],
      ]
    )
    assert.equal(rows[0].after.amountPrecision, 4)
    assert.isNull(rows[1].before)
    assert.equal(rows[2].before.address, EVM_CANONICAL)
    assert.isNull(rows[2].after)
    assert.isNull(rows[3].before)
    assert.deepEqual([rows[4].before.rate, rows[4].after.rate], ['7.25', '7.5'])
  })

  test('settings: plain values before → after; a secret setting only as masked', async ({
    assert,
  }) => {
    const shopToken = 'provider-shop-token-0123456789'
    await ok(SettingsSet, ['order.expiration_minutes', '20'])
    await ok(SettingsSet, ['provider.shop_token', shopToken])
    const rows = await onlyRow()
    assert.deepInclude(rows[0], {
      action: 'setting.set',
      subject_type: 'setting',
      subject_id: 'order.expiration_minutes',
    })
    assert.equal(rows[0].after, 20)
    assert.notEqual(rows[0].before, 20)
    assert.equal(rows[1].subject_id, 'provider.shop_token')
    assert.equal(rows[1].after, '***')
    assert.notInclude(await auditText(), shopToken)
  })

  test('admin users: create, password, role, 2fa reset; no password or hash stored', async ({
    assert,
  }) => {
    const password = 'a very long admin password'
    await ok(AdminCreate, ['second@example.test', `--password=${password}`])
    const reset = await ok(AdminPassword, ['second@example.test'])
    const generated = reset.output.match(/password: (\S+)/)![1]
    await ok(AdminRole, ['second@example.test', 'viewer'])
    await ok(Admin2faReset, ['second@example.test'])
    const rows = await onlyRow()
    assert.deepEqual(
      rows.map((row) => row.action),
      ['user.create', 'user.password', 'user.role', 'user.2fa_reset']
    )
    assert.equal(rows[0].after.email, 'second@example.test')
    assert.isAbove(rows[1].after.passwordChangedAt, rows[1].before.passwordChangedAt - 1)
    assert.deepEqual([rows[2].before.role, rows[2].after.role], ['admin', 'viewer'])
    const text = await auditText()
    assert.notInclude(text, password)
    assert.notInclude(text, generated)
    assert.notInclude(text, '$scrypt')
  })

  test('a refused change writes no row', async ({ assert }) => {
    assert.equal((await runCommand(ApiKeyCreate, ['--secret=short'])).exitCode, 1)
    assert.equal((await runCommand(ChainSet, ['tron', '--confirmations=-1'])).exitCode, 1)
    assert.equal((await runCommand(RateSet, ['usdt', 'cny', '0'])).exitCode, 1)
    assert.equal((await runCommand(RateSet, ['usdt', 'cny', '~9'])).exitCode, 1)
    assert.equal((await runCommand(AdminRole, ['admin@example.test', 'viewer'])).exitCode, 1)
    assert.equal((await runCommand(ApiKeyCreate, ['--pid=1000'])).exitCode, 1)
    assert.equal(await countRows('audit_log'), 0)
  })

  test('outside a command the author is system; a console context gives user, ip and request id', async ({
    assert,
  }) => {
    const rates = rateAdmin
    await rates.set('usdt', 'cny', '7')
    await actingAs(
      {
        actor: { kind: 'user', userId: 7, email: 'ops@example.test' },
        ip: '203.0.113.9',
        requestId: 'req-1',
      },
      () => rates.set('usdt', 'cny', '8')
    )
    const rows = await onlyRow()
    assert.deepInclude(rows[0], {
      actor: 'system',
      actor_kind: 'system',
      actor_user_id: null,
      ip: null,
    })
    assert.deepInclude(rows[1], {
      actor: 'ops@example.test',
      actor_kind: 'user',
      ip: '203.0.113.9',
      request_id: 'req-1',
    })
    assert.equal(Number(rows[1].actor_user_id), 7)
  })

  test('installing the first administrator is audited as system, without its password', async ({
    assert,
  }) => {
    await resetDatabase()
    const rows = await onlyRow()
    assert.lengthOf(rows, 1)
    assert.deepInclude(rows[0], { actor: 'system', action: 'user.create', subject_type: 'user' })
    assert.equal(rows[0].after.email, 'admin@example.test')
    assert.notInclude(await auditText(), 'test-admin-password')
  })

  test('the database refuses to update a row', async ({ assert }) => {
    await ok(RateSet, ['usdt', 'cny', '7'])
    await assert.rejects(() => db.from('audit_log').update({ action: 'forged' }))
    assert.equal((await onlyRow())[0].action, 'rate.set')
  })

  test('the database refuses to delete a row, one or all', async ({ assert }) => {
    await ok(RateSet, ['usdt', 'cny', '7'])
    await ok(RateSet, ['usdt', 'cny', '8'])
    const [first] = await db.from('audit_log').orderBy('id').select('id')
    await assert.rejects(() => db.from('audit_log').where('id', first.id).delete(), /append-only/)
    await assert.rejects(() => db.from('audit_log').delete(), /append-only/)
    // Inside a transaction too: nothing half-deleted once it is refused.
    await assert.rejects(
      () => db.transaction((trx) => trx.from('audit_log').where('id', '>', 0).delete()),
      /append-only/
    )
    assert.equal(await countRows('audit_log'), 2)
  })

  test('TRUNCATE cannot empty it either (PostgreSQL refuses it; SQLite has no such statement)', async ({
    assert,
  }) => {
    await ok(RateSet, ['usdt', 'cny', '7'])
    const refusal = db.connection().dialect.name === 'postgres' ? /append-only/ : /syntax error/
    await assert.rejects(() => db.rawQuery('TRUNCATE audit_log'), refusal)
    assert.equal(await countRows('audit_log'), 1)
  })
})

test.group('Audit log: listing', (group) => {
  group.each.setup(() => freshInstallation())

  test('newest first, filtered by actor, action and subject, paginated without skipping rows of the same millisecond', async ({
    assert,
  }) => {
    const audit = auditLog
    const now = Date.now()
    // Same created_at for all: the cursor must order by id too.
    const rows = Array.from({ length: 7 }, (_, index) => ({
      created_at: now,
      actor_kind: 'ace',
      actor: index % 2 === 0 ? 'ace:alice' : 'ace:bob',
      action: index < 5 ? 'rate.set' : 'wallet.add',
      subject_type: index < 5 ? 'rate' : 'wallet',
      subject_id: `s${index}`,
    }))
    await db.table('audit_log').multiInsert(rows)

    const seen: string[] = []
    let next: string | null = null
    do {
      const page = await audit.list({}, { limit: 3, after: next })
      assert.isAtMost(page.rows.length, 3)
      seen.push(...page.rows.map((row) => row.subjectId))
      next = page.next
    } while (next)
    assert.deepEqual(seen, ['s6', 's5', 's4', 's3', 's2', 's1', 's0'])

    const alice = await audit.list({ actor: 'ace:alice' })
    assert.deepEqual(
      alice.rows.map((row) => row.subjectId),
      ['s6', 's4', 's2', 's0']
    )
    assert.isNull(alice.next)
    const wallets = await audit.list({ action: 'wallet.add' })
    assert.deepEqual(
      wallets.rows.map((row) => row.subjectId),
      ['s6', 's5']
    )
    const one = await audit.list({ subjectType: 'rate', subjectId: 's3' })
    assert.deepEqual(
      one.rows.map((row) => row.subjectId),
      ['s3']
    )
    assert.lengthOf((await audit.list({ since: now + 1 })).rows, 0)
    assert.lengthOf((await audit.list({ until: now + 1 })).rows, 7)
  })

  test('action prefix (wildcards taken literally, case kept) and client address filters', async ({
    assert,
  }) => {
    const audit = auditLog
    const now = Date.now()
    const actions = [
      'api_key.create',
      'apiXkey.create',
      'auth.login',
      'auth.login_failed',
      'auth.2fa_enable',
      'AUTH.login',
      'auth%x',
    ]
    await db.table('audit_log').multiInsert(
      actions.map((action, index) => ({
        created_at: now + index,
        actor_kind: 'system',
        actor: 'system',
        action,
        subject_type: 'user',
        subject_id: String(index),
        ip: index % 2 === 0 ? '203.0.113.9' : '2001:db8::1',
      }))
    )
    const prefixed = async (actionPrefix: string) =>
      (await audit.list({ actionPrefix })).rows.map((row) => row.action)
    assert.deepEqual(await prefixed('api_key.'), ['api_key.create'])
    assert.deepEqual(await prefixed('auth.'), [
      'auth.2fa_enable',
      'auth.login_failed',
      'auth.login',
    ])
    assert.deepEqual(await prefixed('auth.2fa_'), ['auth.2fa_enable'])
    assert.deepEqual(await prefixed('auth%'), ['auth%x'])
    assert.deepEqual(await prefixed('nothing.'), [])
    assert.lengthOf((await audit.list({ actionPrefix: '' })).rows, actions.length)

    const fromIpv6 = await audit.list({ ip: '2001:db8::1' })
    assert.deepEqual(
      fromIpv6.rows.map((row) => row.action),
      ['AUTH.login', 'auth.login_failed', 'apiXkey.create']
    )
    const combined = await audit.list({ ip: '203.0.113.9', actionPrefix: 'auth.' })
    assert.deepEqual(
      combined.rows.map((row) => row.action),
      ['auth.2fa_enable', 'auth.login']
    )
  })

  test('a row is read back with its JSON parsed and secrets still masked', async ({ assert }) => {
    await ok(ApiKeyCreate, ['--pid=shop9', '--secret=shop9-secret-0123456789-abcd'])
    const page = await new AuditLog().list({ subjectType: 'api_key' })
    assert.lengthOf(page.rows, 1)
    assert.equal((page.rows[0].after as { secretKey: string }).secretKey, '…abcd')
    assert.equal(page.rows[0].actor, ACE)
  })
})
