import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import { RpcPool } from '#chains/rpc_pool'
import { Anvil } from '#tests/helpers/evm/anvil'
import { CLOSED_URL } from '#tests/helpers/processes'
import { resetDatabase } from '#tests/helpers/database'
import { pageText } from '#tests/helpers/admin'
import { adminReading, assertChinese } from '#tests/helpers/admin_language'

/** The help shown under a field of the chain form (console.field's `f-<name>-help`). */
function helpOf(html: string, field: string): string {
  const match = html.match(new RegExp(`id="f-${field}-help"[^>]*>([^<]*)<`))
  return match ? match[1].trim() : ''
}

test.group('Console chains in Chinese', (group) => {
  group.each.setup(() => resetDatabase())

  test('the list, the add-network form, a chain, a token and the plugins speak Chinese', async ({
    assert,
  }) => {
    const agent = await adminReading()
    const list = await agent.get('/chains')
    assertChinese(assert, list, [
      '本网关监听的网络、网络上的代币及各扫描器的运行状态。',
      '上次扫描',
      '启用 / 全部',
      '添加网络',
      '付款人看到的名称',
      '仅限 evm 链类型',
      // The option's label and help come from the EVM plugin's own texts.
      '链 ID',
      'EIP-155 链 ID',
      '测试最多等待 RPC 超时时间（不超过 15 秒）。',
    ])
    assert.include(list.text, 'data-busy-label="正在测试节点…"')
    assert.include(list.text, 'data-busy-status-text="正在测试节点：最多需要 15 秒。"')
    assert.match(pageText(list.text), /evm（\d+ 个网络：/)

    const chain = await agent.get('/chains/ethereum')
    assertChinese(assert, chain, [
      'ethereum · evm 链类型',
      '测试连接',
      '停用链',
      'RPC 节点',
      '每日请求数',
      '区块浏览器交易链接',
      '{tx} 代表交易。留空：不显示链接。',
      '付款人在 Ethereum 上可用于付款的代币。',
      '添加代币',
      '金额精度（2–6）',
    ])
    assertChinese(assert, await agent.get('/chains/ethereum/tokens/USDT'), [
      'Ethereum 上的 USDT',
      '与 token:set 使用相同的规则校验：合约由 evm 链类型校验。',
      '应付金额的小数位数（2 到 6）。',
    ])
    assertChinese(assert, await agent.get('/plugins'), [
      '本网关由哪些插件构成。',
      '已加载',
      '链类型',
      '扫描 · 校验交易',
      // The plugins' own words: their descriptions, address formats and settings' help.
      'TRON：TRC-20 与 TRX 转账',
      '以 T 开头的 base58 地址（34 个字符）',
      '原始格式 0:<64 位十六进制>，或用户友好格式（48 个字符，EQ…/UQ…）',
      'Solana：SPL 代币与 SOL 转账',
      '未指定法币的兼容订单所用的法币。',
    ])
    const english = pageText((await agent.get('/plugins', { 'accept-language': 'en' })).text)
    for (const words of [
      'TRON: TRC-20 and TRX transfers',
      'addresses: raw form 0:<64 hex> or user-friendly form (48 characters, EQ…/UQ…)',
      'Fiat currency of compat orders that send none',
    ])
      assert.include(english, words)

    const missing = await agent.get('/chains/nowhere')
    assert.equal(missing.status, 404)
    assert.include(pageText(missing.text), '没有名为“nowhere”的链。')
  })

  test('the API key and options help come from the family’s plugin, in both languages, else the general text', async ({
    assert,
  }) => {
    const chinese = await adminReading('zh-CN')
    const english = await adminReading('en')

    const tronZh = (await chinese.get('/chains/tron')).text
    assert.equal(
      helpOf(tronZh, 'api_key'),
      '由链类型放在请求头中发送（TronGrid：TRON-PRO-API-KEY）。留空即保留已存的密钥。'
    )
    assert.include(helpOf(tronZh, 'options'), 'TRON：lookbackMinutes、deepScanHours')
    const tronEn = (await english.get('/chains/tron')).text
    assert.equal(
      helpOf(tronEn, 'api_key'),
      'Sent by the family in a header (TronGrid: TRON-PRO-API-KEY). Leave blank to keep the stored key.'
    )

    // The add-network form's busy texts (admin_add_network.js shows them) in English as before.
    const listEn = (await english.get('/chains')).text
    assert.include(listEn, 'data-busy-label="Testing the endpoint…"')
    assert.include(listEn, 'data-busy-status-text="Testing the endpoint: this takes up to 15 s."')

    const evmEn = (await english.get('/chains/ethereum')).text
    assert.equal(
      helpOf(evmEn, 'options'),
      'key=value, one per line (EVM: chainId, blockRange, reorgDepth, traces=auto|debug|parity|off). Remove a line to remove that option.'
    )
    assert.include(
      helpOf((await chinese.get('/chains/ethereum')).text, 'options'),
      '每行一个（EVM：'
    )

    assert.equal(
      helpOf((await chinese.get('/chains/ton')).text, 'options'),
      'TON 不接受任何选项：请留空。'
    )

    // Solana's plugin brings no console texts: the general ones.
    const solanaZh = (await chinese.get('/chains/solana')).text
    assert.equal(
      helpOf(solanaZh, 'api_key'),
      '当服务商要求在 URL 之外单独提供密钥时，由链类型发送。留空即保留已存的密钥。'
    )
    assert.equal(
      helpOf(solanaZh, 'options'),
      'key=value，每行一个（该链类型读取的选项）。删除一行即删除该选项。'
    )
    const solanaEn = (await english.get('/chains/solana')).text
    assert.equal(
      helpOf(solanaEn, 'api_key'),
      'Sent by the family where its provider asks for a key apart from the URL. Leave blank to keep the stored key.'
    )
    assert.notInclude(pageText(solanaEn), 'TRON-PRO-API-KEY')
  })

  test('flash messages and refusals come in Chinese', async ({ assert }) => {
    const agent = await adminReading('zh-CN')
    await chainAdmin.set('tron', { enabled: true })
    const disabled = await agent.submit('/chains/tron/disable', {}, '/chains/tron')
    assert.equal(disabled.status, 302)
    assertChinese(assert, await agent.get('/chains/tron'), [
      'TRON 已停用：该链上的新订单将被拒绝（10014），且不再扫描。',
      '启用链',
    ])

    await agent.submit('/chains/tron/tokens/USDT/disable', {}, '/chains/tron')
    assertChinese(assert, await agent.get('/chains/tron'), [
      'tron 上的 USDT 已停用：新订单不能再使用它。',
    ])

    const refused = await agent.submit(
      '/chains/tron/tokens',
      { symbol: 'ABC', decimals: '6', precision: '2', contract: '' },
      '/chains/tron'
    )
    assert.equal(refused.status, 302)
    assertChinese(assert, await agent.get('/chains/tron'), ['请填写代币合约，或勾选“原生币”'])
  })
})

test.group('Console chains in Chinese: test connection', (group) => {
  const anvil = new Anvil()
  group.setup(async () => {
    await anvil.start(1)
    return () => anvil.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    RpcPool.reset()
  })

  test('the results and the flash speak Chinese', async ({ assert }) => {
    const closed = CLOSED_URL
    await chainAdmin.set('ethereum', { rpcUrls: [anvil.url, closed] })
    const agent = await adminReading('zh-CN')
    await agent.get('/chains/ethereum')
    const response = await agent.post('/chains/ethereum/test')
    const page = await agent.follow(response.location!)
    assertChinese(assert, page, [
      'ethereum 的 2 个 RPC 节点中有 1 个未应答。',
      '连接测试',
      '各 RPC 节点刚才的应答。',
      '节点 结果 最新区块 延迟',
      `${anvil.url} 已应答`,
      `${closed} 失败`,
    ])
  })
})
