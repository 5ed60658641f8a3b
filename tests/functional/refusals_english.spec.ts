import { test } from '@japa/runner'
import i18nManager from '@adonisjs/i18n/services/main'
import { OperatorError } from '#support/cli/operator_error'
import { REFUSALS_PREFIX, refusalText } from '#admin/refusal_text'
import chainAdmin from '#services/operators/chain_admin'
import walletAdmin from '#services/operators/wallet_admin'
import rateAdmin from '#services/operators/rate_admin'
import apiKeyAdmin, {
  checkPid,
  normalizeIpAllowlist,
  normalizeNote,
} from '#services/operators/api_key_admin'
import adminUsers, { normalizeEmail } from '#services/operators/admin_users'
import orderAdmin from '#services/operators/order_admin'
import unmatchedPaymentAdmin from '#services/operators/unmatched_payment_admin'
import callbackAdmin from '#services/operators/callback_admin'
import twoFactor from '#services/operators/two_factor'
import chainOverview from '#services/operators/chain_overview'
import { checkCallbackUrl } from '#services/admin/test_callback'
import { dayStarts } from '#services/admin/dashboard_stats'
import { explorerTemplateProblem } from '#chains/explorer_links'
import { resetDatabase } from '#tests/helpers/database'
import { createAdminUser } from '#tests/helpers/admin'
import { FAKE_NETWORK, FAKE_WALLET } from '#tests/helpers/fake_chain'
import { TRON_WALLET } from '#tests/helpers/merchant'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'

/** The refusal `attempt` throws (or returns, for the rules that say why). */
async function refusalOf(attempt: () => unknown): Promise<OperatorError> {
  try {
    const returned = await attempt()
    if (returned instanceof OperatorError) return returned
  } catch (error) {
    if (error instanceof OperatorError) return error
    throw error
  }
  throw new Error('not refused')
}

test.group('Refusals: the English catalogue says the English message', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('for each keyed refusal the services give, en formats to error.message exactly', async ({
    assert,
    client,
  }) => {
    const admin = await createAdminUser({ role: 'admin' })
    await walletAdmin.add('tron', TRON_WALLET)
    const order = await newOrder(client)
    const attempts: (() => unknown)[] = [
      () => chainAdmin.find('nowhere'),
      () => chainOverview.one('nowhere'),
      () => chainAdmin.add('Bad Name!', { family: 'tron' }),
      () => chainAdmin.add('tron', { family: 'tron' }),
      () => chainAdmin.add('newnet', { family: 'nosuchfamily' }),
      () => chainAdmin.set('tron', { confirmations: 5000 }),
      () => chainAdmin.set('tron', { scanIntervalSeconds: 0 }),
      () => chainAdmin.set('tron', { blockTimeSeconds: 1000 }),
      () => chainAdmin.set('tron', { displayName: '' }),
      () => chainAdmin.set('tron', { rpcUrls: ['not a url'] }),
      () => chainAdmin.set('tron', { rpcUrls: ['ftp://node.example'] }),
      () => chainAdmin.set('tron', { rpcUrls: ['https://a.example', 'https://a.example'] }),
      () => chainAdmin.set('tron', { wsUrl: 'https://node.example' }),
      () => chainAdmin.set('tron', { explorerTxUrl: 'https://scan.example/tx/' }),
      () => chainAdmin.set('tron', { apiKey: 'x'.repeat(501) }),
      () => chainAdmin.set('tron', { family: 'evm' }),
      () => chainAdmin.addToken(FAKE_NETWORK, 'USDT', {}),
      () => chainAdmin.setToken(FAKE_NETWORK, 'bad symbol!', {}),
      () => chainAdmin.setToken(FAKE_NETWORK, 'NEW', {}),
      () => chainAdmin.setToken(FAKE_NETWORK, 'USDT', { decimals: 99 }),
      () => chainAdmin.setToken(FAKE_NETWORK, 'USDT', { precision: 9 }),
      () => chainAdmin.setToken('tron', 'XYZ', { decimals: 6, contract: 'not-an-address' }),
      () => explorerTemplateProblem('x'.repeat(501)),
      () => explorerTemplateProblem('not a url {tx}'),
      () => explorerTemplateProblem('ftp://scan.example/{tx}'),
      () => walletAdmin.add('tron', 'not-an-address'),
      () => walletAdmin.add('tron', TRON_WALLET),
      () => walletAdmin.add('tron', 'T'.repeat(300)),
      () => walletAdmin.add(FAKE_NETWORK, 'fake:other', 'n'.repeat(300)),
      () => walletAdmin.find('tron', 'TNoSuchWalletxxxxxxxxxxxxxxxxxxxxx'),
      () => walletAdmin.findById(999999),
      () => walletAdmin.remove(FAKE_NETWORK, FAKE_WALLET),
      () => walletAdmin.importBatch('   '),
      () => rateAdmin.set('USDT', 'CNY', '0'),
      () => rateAdmin.set('USDT', 'CNY', '7.1234567890123'),
      () => rateAdmin.set('usdt!', 'CNY', '7'),
      () => rateAdmin.set('USDT', 'cn', '7'),
      () => rateAdmin.set('USDT', 'CNY', '~abc'),
      () => rateAdmin.set('USDT', 'CNY', '7', { apiKeyPid: 'nope' }),
      () => rateAdmin.clearMarkup('USDT', 'CNY'),
      () => checkPid('bad pid!'),
      () => normalizeIpAllowlist(['not-an-ip']),
      () => normalizeNote('one\ntwo'),
      () => normalizeNote('n'.repeat(3000)),
      () => apiKeyAdmin.find('nope'),
      () => apiKeyAdmin.create({ pid: 'shop-1', secret: 'short' }),
      () => normalizeEmail('not-an-email'),
      () => adminUsers.find('nobody@example.test'),
      () => adminUsers.create({ email: admin.email }),
      () => adminUsers.create({ email: 'new@example.test', role: 'owner' }),
      () => adminUsers.create({ email: 'new@example.test', password: 'short' }),
      () => adminUsers.create({ email: 'new@example.test', password: '   ' }),
      () => adminUsers.changeOwnPassword(admin.user, 'wrong password!', 'another password'),
      () => adminUsers.disable(admin.email, { actingUserId: admin.user.id }),
      () => orderAdmin.find('NoSuchOrder'),
      () => orderAdmin.resendCallback(order.tradeId),
      () => orderAdmin.markPaid(order.tradeId, ''),
      () => orderAdmin.markPaid(order.tradeId, 'x'.repeat(1000)),
      () => unmatchedPaymentAdmin.assign(999999, 'x'),
      () => unmatchedPaymentAdmin.dismiss(1, ''),
      () => callbackAdmin.redeliverMatching({}),
      () => twoFactor.begin(admin.user, 'Test', { password: 'wrong password!' }),
      () => twoFactor.confirm(admin.user, '000000'),
      () => checkCallbackUrl(''),
      () => checkCallbackUrl('not a url'),
      () => checkCallbackUrl('ftp://shop.example/notify'),
      () => dayStarts(Date.now(), 'Nowhere/Nothing'),
    ]
    const en = i18nManager.locale('en')
    const zh = i18nManager.locale('zh-CN')
    const keys = new Set<string>()
    for (const [index, attempt] of attempts.entries()) {
      const error = await refusalOf(attempt)
      const where = `attempt ${index}: ${error.message}`
      assert.isDefined(error.key, `${where} has no key`)
      assert.isTrue(en.hasMessage(REFUSALS_PREFIX + error.key), `${where}: ${error.key}`)
      assert.equal(refusalText(en, error), error.message, where)
      const chinese = refusalText(zh, error)
      assert.notEqual(chinese, error.message, where)
      assert.notInclude(chinese, 'translation missing', where)
      keys.add(error.key!)
    }
    assert.isAtLeast(keys.size, 55)
  })

  test("a plugin's reason (a bad address, contract or option): en formats to error.message, zh-CN says the reason in Chinese too", async ({
    assert,
  }) => {
    const attempts: (() => unknown)[] = [
      () => walletAdmin.add('ethereum', '0x123'),
      // EIP-55's own example with its last letter's case flipped.
      () => walletAdmin.add('ethereum', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD'),
      () => chainAdmin.set('ethereum', { options: { blockRange: '0' } }),
      () => chainAdmin.set('ethereum', { options: { traces: 'sometimes' } }),
      () => chainAdmin.set('ethereum', { options: { nope: '1' } }),
      () => chainAdmin.setToken('ethereum', 'XYZ', { decimals: 6, contract: '0x1' }),
      () => walletAdmin.add('tron', 'not-an-address'),
      // A Bitcoin address: base58check, but not TRON's prefix.
      () => walletAdmin.add('tron', '1BoatSLRHtKNngkdXEeobR76b53LETtpyT'),
      () => chainAdmin.set('tron', { options: { nope: '1' } }),
      () => chainAdmin.set('tron', { options: { lookbackMinutes: '1' } }),
      () => walletAdmin.add('solana', 'not-an-address'),
      () => walletAdmin.add('ton', 'not-an-address'),
    ]
    const en = i18nManager.locale('en')
    const zh = i18nManager.locale('zh-CN')
    const reasons = new Set<string>()
    for (const [index, attempt] of attempts.entries()) {
      const error = await refusalOf(attempt)
      const where = `attempt ${index}: ${error.message}`
      assert.isDefined(error.reason, `${where} has no reason of its plugin`)
      const reason = error.reason!
      assert.equal(
        en.formatMessage(reason.key, reason.args as Record<string, string>),
        String(error.args.reason),
        where
      )
      assert.equal(refusalText(en, error), error.message, where)
      const chinese = refusalText(zh, error)
      assert.notInclude(chinese, String(error.args.reason), where)
      assert.notInclude(chinese, 'translation missing', where)
      assert.match(chinese, /[\u4e00-\u9fff]/, where)
      // The reason's values (the address, the option) are kept as written.
      for (const value of Object.values(reason.args ?? {}))
        assert.include(chinese, String(value), where)
      reasons.add(reason.key)
    }
    assert.equal(reasons.size, 11, 'every reason the families give')
  })

  test('the order rules: en formats to error.message', async ({ assert, client }) => {
    const order = await newOrder(client)
    const en = i18nManager.locale('en')
    for (const refusal of [
      orderAdmin.resendRefusal(order),
      await refusalOf(async () => {
        await orderAdmin.close(order.tradeId)
        return orderAdmin.close(order.tradeId)
      }),
    ]) {
      assert.instanceOf(refusal, OperatorError)
      assert.equal(refusalText(en, refusal!), refusal!.message)
    }
  })
})
