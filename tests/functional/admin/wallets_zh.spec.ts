import walletAdmin from '#services/operators/wallet_admin'
import { test } from '@japa/runner'
import Wallet from '#models/wallet'
import { resetDatabase } from '#tests/helpers/database'
import { pageText } from '#tests/helpers/admin'
import { adminReading, assertChinese } from '#tests/helpers/admin_language'
import { TRON_WALLET, TRON_WALLET_2 } from '#tests/helpers/merchant'
import { prepareLifecycle } from '#tests/helpers/orders'

const EVM_LOWER = '0x52908400098527886e0f7030069857d2e4169ee7'
const EVM_CANONICAL = '0x52908400098527886E0F7030069857D2E4169EE7'

test.group('Console wallets in Chinese', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('the list, its filters and the add form speak Chinese', async ({ assert }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    await walletAdmin.add('tron', TRON_WALLET_2)
    await walletAdmin.update('tron', TRON_WALLET_2, { enabled: false })
    const agent = await adminReading()
    const page = await agent.get('/wallets')
    assertChinese(assert, page, [
      '收款地址。订单会分配到其网络下已启用的钱包上。',
      '批量导入',
      '全部网络',
      '地址或备注',
      '待支付',
      '已停用',
      `从 tron 删除 ${TRON_WALLET}？`,
      '本页 3 个钱包',
      '添加钱包',
      '备注（可选）',
    ])
    assertChinese(assert, await agent.get('/wallets?network=nowhere'), ['没有符合筛选条件的钱包'])
  })

  test('flash messages come in Chinese', async ({ assert }) => {
    const agent = await adminReading()
    const added = await agent.submit(
      '/wallets',
      { network: 'ethereum', address: EVM_LOWER, note: '' },
      '/wallets'
    )
    assert.equal(added.status, 302)
    assertChinese(assert, await agent.get('/wallets?network=ethereum'), [
      `已在 ethereum 上添加钱包：${EVM_CANONICAL}（已按规范格式保存）。`,
    ])
    const wallet = await Wallet.findByOrFail('address', EVM_CANONICAL)
    await agent.submit(`/wallets/${wallet.id}/disable`, {}, '/wallets')
    assert.include(
      pageText((await agent.get('/wallets')).text),
      `ethereum 上的 ${EVM_CANONICAL} 已停用：新订单不再使用它`
    )
    const missing = await agent.post('/wallets/999999/enable')
    assert.equal(missing.status, 404)
    assert.include(pageText(missing.text), '没有这个 id 的钱包。')
  })

  test('the import page and its report speak Chinese', async ({ assert }) => {
    const agent = await adminReading()
    assertChinese(assert, await agent.get('/wallets/import'), [
      '导入钱包',
      '每行自带网络',
      '以 # 开头的行会被跳过',
    ])
    const report = await agent.post('/wallets/import', {
      network: 'ethereum',
      text: [EVM_LOWER, `tron ${TRON_WALLET}`, 'tron not-an-address', EVM_CANONICAL].join('\n'),
    })
    assertChinese(assert, report, [
      '新增 2 个，已存在 1 个，无效 1 个。',
      `1 ethereum ${EVM_CANONICAL} 已新增`,
      '3 tron not-an-address 无效',
      '继续导入',
    ])
  })
})
