import { test } from '@japa/runner'
import type { Assert } from '@japa/assert'
import WalletAdd from '#commands/wallet_add'
import Wallet from '#models/wallet'
import walletAdmin from '#services/operators/wallet_admin'
import { resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText, type AdminResponse } from '#tests/helpers/admin'
import { runCommand } from '#tests/helpers/ace_command'
import { FAKE_WALLET } from '#tests/helpers/fake_chain'
import { TRON_WALLET } from '#tests/helpers/merchant'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'

/** An admin whose language is `locale` (the account's choice, and the browser's). */
async function adminIn(locale: 'zh-CN' | 'en') {
  const admin = await createAdminUser({ role: 'admin' })
  admin.user.locale = locale
  await admin.user.save()
  const agent = await AdminAgent.signIn(admin)
  agent.headers['accept-language'] = locale === 'en' ? 'en' : 'zh-CN,zh;q=0.9'
  return agent
}

/** The page a refused form goes back to, in words. */
async function refusalShown(agent: AdminAgent, refused: AdminResponse) {
  if (refused.status !== 302 || !refused.location) {
    throw new Error(`expected a redirect back to the form, got HTTP ${refused.status}`)
  }
  const page = await agent.follow(refused.location)
  return pageText(page.text)
}

/** A form sent (its page got first, as a user filling it in) and refused: the words of the page it goes back to. */
async function refusal(
  agent: AdminAgent,
  path: string,
  fields: Record<string, string>,
  formPage = path
) {
  return refusalShown(agent, await agent.submit(path, fields, formPage))
}

/** The settings' fixed rate of USDT/CNY set to `rate` from its form, refused: the page's words. */
function fixedRateRefusal(agent: AdminAgent, rate: string) {
  return refusal(
    agent,
    '/settings/rates/fixed',
    { token: 'USDT', fiat: 'CNY', rate },
    '/settings/rates'
  )
}

function assertShown(assert: Assert, text: string, expected: string[], absent: string[] = []) {
  assert.notInclude(text, 'translation missing')
  for (const words of expected) assert.include(text, words)
  for (const words of absent) assert.notInclude(text, words)
}

test.group('Console refusals in Chinese', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('the wallet form: unknown network, bad address, duplicate', async ({ assert }) => {
    const agent = await adminIn('zh-CN')
    assertShown(
      assert,
      await refusal(agent, '/wallets', { network: 'nowhere', address: TRON_WALLET, note: '' }),
      ['未知网络“nowhere”。已知网络：'],
      ['Unknown network']
    )

    // The family's reason comes from the chain plugin's own texts, in Chinese too.
    assertShown(
      assert,
      await refusal(agent, '/wallets', { network: 'tron', address: 'not-an-address', note: '' }),
      ['地址无效：“not-an-address”不是 TRON 地址'],
      ['is not a TRON address']
    )

    await walletAdmin.add('tron', TRON_WALLET)
    assertShown(
      assert,
      await refusal(agent, '/wallets', { network: 'tron', address: TRON_WALLET, note: '' }),
      [`钱包地址已存在（10001）：tron 上的 ${TRON_WALLET}`],
      ['Wallet address already exists']
    )
  })

  test('removing a wallet an order waits on', async ({ client, assert }) => {
    await newOrder(client)
    const wallet = await Wallet.findByOrFail('address', FAKE_WALLET)
    const agent = await adminIn('zh-CN')
    await agent.get('/wallets')
    const refused = await agent.post(`/wallets/${wallet.id}/remove`)
    assertShown(
      assert,
      await refusalShown(agent, refused),
      [
        `仍有 1 个订单在等待向 ${FAKE_WALLET} 付款（金额已在该钱包上预留）：请先停用该钱包，使新订单不再使用它，等这些订单结束后再删除`,
      ],
      ['order(s) still wait']
    )
    assert.isNotNull(await Wallet.find(wallet.id))
  })

  test('an invalid fixed rate, and a bad pid at its field', async ({ assert }) => {
    const agent = await adminIn('zh-CN')
    assertShown(
      assert,
      await fixedRateRefusal(agent, '0'),
      ['汇率必须是正的十进制数（1 USDT = 汇率 CNY）'],
      ['The rate must be']
    )
    assertShown(assert, await fixedRateRefusal(agent, '7.1234567890123'), [
      '汇率最多 12 位小数、15 位有效数字',
    ])

    assertShown(
      assert,
      await refusal(agent, '/api-keys', { pid: 'bad pid!', note: '', ips: '' }, '/api-keys/new'),
      ['pid 须为 1 到 32 个字母、数字、“_”或“-”'],
      ['The pid must be']
    )
  })

  test('the import report gives each line its reason in Chinese', async ({ assert }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    const agent = await adminIn('zh-CN')
    await agent.get('/wallets/import')
    const report = await agent.post('/wallets/import', {
      network: '',
      text: [`tron ${TRON_WALLET}`, 'tron not-an-address', 'nowhere x', TRON_WALLET].join('\n'),
    })
    assertShown(
      assert,
      pageText(report.text),
      [
        '已存在',
        '地址无效：“not-an-address”不是 TRON 地址',
        '未知网络“nowhere”',
        '没有网络：请写成“网络 地址”',
      ],
      ['already present', 'Unknown network', 'no network:', 'is not a TRON address']
    )
  })
})

test.group('Console refusals in English, and the commands', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('an English admin reads the refusals as they always were', async ({ assert }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    const agent = await adminIn('en')
    assertShown(
      assert,
      await refusal(agent, '/wallets', { network: 'tron', address: TRON_WALLET, note: '' }),
      [`Wallet address already exists (10001): ${TRON_WALLET} on tron`]
    )
    assertShown(assert, await fixedRateRefusal(agent, '0'), [
      'The rate must be a positive decimal number (1 USDT = RATE CNY)',
    ])
  })

  test('an ace command still prints the English refusal', async ({ assert }) => {
    const { exitCode, output } = await runCommand(WalletAdd, ['nowhere', TRON_WALLET])
    assert.equal(exitCode, 1)
    assert.include(output, 'Unknown network "nowhere". Known networks: ')
    assert.notInclude(output, '未知网络')
  })
})
