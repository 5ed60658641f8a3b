import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { moveEvmOptions } from '#database/migrations/1763700000016_chain_family_options'
import ApiKey from '#models/api_key'
import Chain from '#models/chain'
import Token from '#models/token'
import Wallet from '#models/wallet'
import Rate from '#models/rate'
import Order from '#models/order'
import settings from '#settings/settings_service'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { makeTronPayable } from '#tests/helpers/setup'
import { TRON_WALLET, createOrder, orderParams } from '#tests/helpers/merchant'
import { CLOSED_URL, runAce } from '#tests/helpers/processes'
import { runCommand } from '#tests/helpers/ace_command'
import { Anvil } from '#tests/helpers/evm/anvil'
import ApiKeyCreate from '#commands/apikey_create'
import ApiKeyList from '#commands/apikey_list'
import ApiKeyRotate from '#commands/apikey_rotate'
import ApiKeySet from '#commands/apikey_set'
import ChainSet from '#commands/chain_set'
import TokenSet from '#commands/token_set'
import WalletAdd from '#commands/wallet_add'
import WalletRemove from '#commands/wallet_remove'
import RateSet from '#commands/rate_set'
import SettingsSet from '#commands/settings_set'
import SettingsGet from '#commands/settings_get'
import OrdersClose from '#commands/orders_close'

test.group('Operator commands: API keys', (group) => {
  group.each.setup(() => resetDatabase())

  test('apikey:create picks the next pid and prints the secret once', async ({ assert }) => {
    const { exitCode, output } = await runCommand(ApiKeyCreate, [])
    assert.equal(exitCode, 0)
    const key = await ApiKey.findByOrFail('pid', '1001')
    assert.match(key.signingSecret(), /^[0-9a-f]{64}$/)
    assert.include(output, key.signingSecret())
  })

  test('apikey:create with --pid, --secret and --ip; a duplicate pid is refused', async ({
    assert,
  }) => {
    const created = await runCommand(ApiKeyCreate, [
      '--pid=shop7',
      '--secret=shop7-secret-012345',
      '--ip=10.0.0.1',
    ])
    assert.equal(created.exitCode, 0)
    const key = await ApiKey.findByOrFail('pid', 'shop7')
    assert.equal(key.signingSecret(), 'shop7-secret-012345')
    assert.equal(key.ipAllowlist, '10.0.0.1')

    const again = await runCommand(ApiKeyCreate, ['--pid=shop7'])
    assert.equal(again.exitCode, 1)
    assert.match(again.output, /already exists/)
  })

  test('apikey:create refuses a weak secret and a bad IP', async ({ assert }) => {
    assert.equal((await runCommand(ApiKeyCreate, ['--secret=short'])).exitCode, 1)
    assert.equal((await runCommand(ApiKeyCreate, ['--ip=not-an-ip'])).exitCode, 1)
    assert.equal(await countRows('api_keys'), 1)
  })

  test('apikey:list masks secrets', async ({ assert }) => {
    const { exitCode, output } = await runCommand(ApiKeyList, [])
    assert.equal(exitCode, 0)
    assert.include(output, '1000')
    assert.notInclude(output, 'test-secret-0123456789abcdef')
  })

  test('apikey:rotate replaces the secret; unknown pid is refused', async ({ assert }) => {
    const { exitCode, output } = await runCommand(ApiKeyRotate, ['1000'])
    assert.equal(exitCode, 0)
    const key = await ApiKey.findByOrFail('pid', '1000')
    assert.notEqual(key.signingSecret(), 'test-secret-0123456789abcdef')
    assert.include(output, key.signingSecret())
    assert.equal((await runCommand(ApiKeyRotate, ['4242'])).exitCode, 1)
  })

  test('apikey:set disables, enables and sets IPs', async ({ assert }) => {
    assert.equal((await runCommand(ApiKeySet, ['1000', '--disable'])).exitCode, 0)
    assert.equal((await ApiKey.findByOrFail('pid', '1000')).status, 'disabled')
    assert.equal(
      (await runCommand(ApiKeySet, ['1000', '--enable', '--ip=127.0.0.1', '--ip=10.0.0.0/8']))
        .exitCode,
      0
    )
    const key = await ApiKey.findByOrFail('pid', '1000')
    assert.equal(key.status, 'active')
    assert.equal(key.ipAllowlist, '127.0.0.1,10.0.0.0/8')
    assert.equal((await runCommand(ApiKeySet, ['1000', '--enable', '--disable'])).exitCode, 1)
  })
})

test.group('Operator commands: chains, tokens, wallets, rates', (group) => {
  group.each.setup(() => resetDatabase())

  test('chain:set changes state, RPC list and confirmations', async ({ assert }) => {
    const result = await runCommand(ChainSet, [
      'ethereum',
      '--disable',
      '--rpc=https://rpc-a.example',
      '--rpc=https://rpc-b.example',
      '--confirmations=20',
      '--scan-interval=30',
    ])
    assert.equal(result.exitCode, 0, result.output)
    const chain = await Chain.findByOrFail('network', 'ethereum')
    assert.isFalse(chain.enabled)
    assert.deepEqual(chain.rpcUrls, ['https://rpc-a.example', 'https://rpc-b.example'])
    assert.equal(chain.confirmations, 20)
    assert.equal(chain.scanIntervalSeconds, 30)
    assert.equal((await runCommand(ChainSet, ['ethereum', '--enable'])).exitCode, 0)
    assert.isTrue((await Chain.findByOrFail('network', 'ethereum')).enabled)
  })

  test('chain:set refuses bad input with a clear message', async ({ assert }) => {
    const unknown = await runCommand(ChainSet, ['dogechain', '--enable'])
    assert.equal(unknown.exitCode, 1)
    assert.match(unknown.output, /Unknown network "dogechain". Known networks: tron, ethereum/)
    assert.equal((await runCommand(ChainSet, ['tron', '--rpc=ftp://x'])).exitCode, 1)
    assert.equal((await runCommand(ChainSet, ['tron', '--rpc=nonsense'])).exitCode, 1)
    assert.equal((await runCommand(ChainSet, ['tron', '--confirmations=-1'])).exitCode, 1)
  })

  test('chain:set with --family adds a new network', async ({ assert }) => {
    const result = await runCommand(ChainSet, [
      'linea',
      '--family=evm',
      '--option=chainId=59144',
      '--display-name=Linea',
    ])
    assert.equal(result.exitCode, 0, result.output)
    const chain = await Chain.findByOrFail('network', 'linea')
    assert.equal(chain.family, 'evm')
    assert.deepEqual(chain.options, { chainId: 59144 })
    assert.equal((await runCommand(ChainSet, ['newnet', '--family=bitcoin'])).exitCode, 1)
  })

  test('chain:set --family with --rpc tests the URL first: another chain id or no answer adds nothing; --skip-check adds it untested', async ({
    assert,
    cleanup,
  }) => {
    const anvil = await new Anvil().start(59144)
    cleanup(() => anvil.stop())
    const add = (network: string, chainId: number, url: string, ...more: string[]) =>
      runCommand(ChainSet, [
        network,
        '--family=evm',
        `--option=chainId=${chainId}`,
        `--rpc=${url}`,
        ...more,
      ])

    const wrong = await add('linea', 8453, anvil.url)
    assert.equal(wrong.exitCode, 1, wrong.output)
    assert.include(
      wrong.output,
      `${anvil.url}: the endpoint serves chain id 59144, not 8453. Nothing was added`
    )
    const silent = await add('linea', 59144, CLOSED_URL)
    assert.equal(silent.exitCode, 1, silent.output)
    assert.include(silent.output, `${CLOSED_URL} did not answer`)
    assert.isNull(await Chain.findBy('network', 'linea'))

    const right = await add('linea', 59144, anvil.url, '--enable')
    assert.equal(right.exitCode, 0, right.output)
    assert.include(right.output, 'its RPC URL answered and serves this network')
    assert.include(right.output, 'request budget: provider default')
    const linea = await Chain.findByOrFail('network', 'linea')
    assert.deepEqual(linea.rpcUrls, [anvil.url])
    assert.isTrue(linea.enabled)

    const untested = await add('linea-sepolia', 59141, CLOSED_URL, '--skip-check')
    assert.equal(untested.exitCode, 0, untested.output)
    assert.include(untested.output, 'its RPC URL was not tested (--skip-check)')
    assert.deepEqual((await Chain.findByOrFail('network', 'linea-sepolia')).rpcUrls, [CLOSED_URL])
    // An existing network's URLs are changed as before (the chain page tests them on demand).
    const changed = await runCommand(ChainSet, ['linea', `--rpc=${CLOSED_URL}`])
    assert.equal(changed.exitCode, 0, changed.output)
  }).timeout(60_000)

  test('chain:set --option passes family options through; the family validates them', async ({
    assert,
  }) => {
    const set = await runCommand(ChainSet, [
      'ethereum',
      '--option=blockRange=250',
      '--option',
      'chainId=1',
    ])
    assert.equal(set.exitCode, 0, set.output)
    assert.deepEqual((await Chain.findByOrFail('network', 'ethereum')).options, {
      blockRange: 250,
      chainId: 1,
    })

    const bad = await runCommand(ChainSet, ['ethereum', '--option=blockRange=0'])
    assert.equal(bad.exitCode, 1)
    assert.include(
      bad.output,
      'EVM option blockRange must be a whole number from 1 to 100000, not "0"'
    )
    const unknown = await runCommand(ChainSet, ['ethereum', '--option=gasPrice=5'])
    assert.equal(unknown.exitCode, 1)
    assert.include(
      unknown.output,
      'Unknown EVM option "gasPrice"; EVM options: chainId, blockRange, reorgDepth, traces'
    )
    const malformed = await runCommand(ChainSet, ['ethereum', '--option=blockRange'])
    assert.include(malformed.output, '--option takes key=value, not "blockRange"')
    const none = await runCommand(ChainSet, ['solana', '--option=chainId=1'])
    assert.equal(none.exitCode, 1)
    assert.include(none.output, 'The solana family takes no options')
    const otherFamily = await runCommand(ChainSet, ['tron', '--option=chainId=1'])
    assert.equal(otherFamily.exitCode, 1)
    assert.include(otherFamily.output, 'Unknown TRON option "chainId"')
    assert.deepEqual(
      (await Chain.findByOrFail('network', 'ethereum')).options,
      { blockRange: 250, chainId: 1 },
      'unchanged'
    )

    const removed = await runCommand(ChainSet, ['ethereum', '--option=chainId='])
    assert.equal(removed.exitCode, 0, removed.output)
    assert.deepEqual((await Chain.findByOrFail('network', 'ethereum')).options, { blockRange: 250 })
  })

  test('the options migration keeps chain_id and the block range setting as EVM options', async ({
    assert,
  }) => {
    await db.from('chains').update({ options: '{}' })
    await db.from('chains').where('network', 'bsc').update({ chain_id: 56 })
    await db
      .table('settings')
      .insert({ key: 'chains.block_range', type: 'integer', value: '300', updated_at: 1 })
    await moveEvmOptions(db.connection())
    assert.deepEqual((await Chain.findByOrFail('network', 'bsc')).options, {
      blockRange: 300,
      chainId: 56,
    })
    assert.deepEqual((await Chain.findByOrFail('network', 'polygon')).options, { blockRange: 300 })
    assert.deepEqual(
      (await Chain.findByOrFail('network', 'tron')).options,
      {},
      'other families untouched'
    )
    assert.equal(await countRows('settings', { key: 'chains.block_range' }), 0)

    // Without the setting: its default.
    await db.from('chains').update({ options: '{}' })
    await moveEvmOptions(db.connection())
    assert.deepEqual((await Chain.findByOrFail('network', 'polygon')).options, { blockRange: 1000 })
  })

  test('token:set changes precision and state, adds tokens, validates contracts', async ({
    assert,
  }) => {
    assert.equal(
      (await runCommand(TokenSet, ['tron', 'usdt', '--precision=4', '--disable'])).exitCode,
      0
    )
    const usdt = await Token.query().where('network', 'tron').where('symbol', 'USDT').firstOrFail()
    assert.equal(usdt.amountPrecision, 4)
    assert.isFalse(usdt.enabled)

    const added = await runCommand(TokenSet, [
      'ethereum',
      'dai',
      '--contract=0x6b175474e89094c44da98b954eedeac495271d0f',
      '--decimals=18',
      '--precision=2',
    ])
    assert.equal(added.exitCode, 0, added.output)
    const dai = await Token.query()
      .where('network', 'ethereum')
      .where('symbol', 'DAI')
      .firstOrFail()
    assert.equal(dai.contract, '0x6B175474E89094C44Da98b954EedeAC495271d0F')

    assert.equal((await runCommand(TokenSet, ['tron', 'usdt', '--precision=7'])).exitCode, 1)
    assert.equal((await runCommand(TokenSet, ['tron', 'usdt', '--precision=1'])).exitCode, 1)
    assert.equal((await runCommand(TokenSet, ['tron', 'new', '--decimals=6'])).exitCode, 1)
    const badContract = await runCommand(TokenSet, [
      'tron',
      'abc',
      '--decimals=6',
      '--contract=0x1234',
    ])
    assert.equal(badContract.exitCode, 1)
    assert.match(badContract.output, /not a TRON address/)
  })

  test('wallet:add validates per family and normalises; duplicates are refused', async ({
    assert,
  }) => {
    const evm = await runCommand(WalletAdd, [
      'ethereum',
      '0x52908400098527886e0f7030069857d2e4169ee7',
    ])
    assert.equal(evm.exitCode, 0, evm.output)
    assert.isNotNull(
      await Wallet.query()
        .where('network', 'ethereum')
        .where('address', '0x52908400098527886E0F7030069857D2E4169EE7')
        .first()
    )
    const duplicate = await runCommand(WalletAdd, [
      'ethereum',
      '0x52908400098527886E0F7030069857D2E4169EE7',
    ])
    assert.equal(duplicate.exitCode, 1)
    assert.match(duplicate.output, /already exists/)

    for (const [network, address, message] of [
      ['tron', '0x52908400098527886E0F7030069857D2E4169EE7', /TRON/],
      ['ethereum', 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf', /EVM/],
      ['solana', 'not-base58-0OIl', /Solana/],
      ['ton', 'EQ-broken', /TON/],
      ['nowhere', TRON_WALLET, /Unknown network/],
    ] as const) {
      const refused = await runCommand(WalletAdd, [network, address])
      assert.equal(refused.exitCode, 1)
      assert.match(refused.output, message)
    }
    assert.equal(await countRows('wallets'), 1)
  })

  test('wallet:add accepts TON raw and friendly, Solana and TRON addresses', async ({ assert }) => {
    for (const [network, address] of [
      ['ton', '0:b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe'],
      ['solana', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'],
      ['tron', TRON_WALLET],
    ]) {
      const result = await runCommand(WalletAdd, [network, address])
      assert.equal(result.exitCode, 0, result.output)
    }
    // the friendly form of the same TON address is a duplicate
    assert.equal(
      (await runCommand(WalletAdd, ['ton', 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs']))
        .exitCode,
      1
    )
  })

  test('wallet:remove is refused while orders wait on the address, unless --force', async ({
    client,
    assert,
  }) => {
    await makeTronPayable()
    ;(await createOrder(client, orderParams())).assertStatus(200)
    const refused = await runCommand(WalletRemove, ['tron', TRON_WALLET])
    assert.equal(refused.exitCode, 1)
    assert.match(refused.output, /1 order\(s\) still wait/)
    assert.equal((await runCommand(WalletRemove, ['tron', TRON_WALLET, '--force'])).exitCode, 0)
    assert.equal(await countRows('wallets'), 0)
    assert.equal((await runCommand(WalletRemove, ['tron', TRON_WALLET])).exitCode, 1)
  })

  test('rate:set stores 1 TOKEN = RATE FIAT and refuses nonsense', async ({ assert }) => {
    assert.equal((await runCommand(RateSet, ['usdt', 'cny', '7.25'])).exitCode, 0)
    const rate = await Rate.query().where('token', 'USDT').where('fiat', 'CNY').firstOrFail()
    assert.equal(rate.rate, '7.25')
    assert.equal((await runCommand(RateSet, ['USDT', 'CNY', '7.30'])).exitCode, 0)
    assert.equal((await Rate.findOrFail(rate.id)).rate, '7.3')
    for (const bad of ['0', 'abc', '1e3', '0.0000000000001']) {
      assert.equal((await runCommand(RateSet, ['USDT', 'CNY', bad])).exitCode, 1, bad)
    }
    assert.equal((await runCommand(RateSet, ['USDT', 'C', '7'])).exitCode, 1)
  })
})

test.group('Operator commands: settings and orders', (group) => {
  group.each.setup(() => resetDatabase())

  test('settings:set validates; settings:get shows one or all, secrets masked', async ({
    assert,
  }) => {
    assert.equal((await runCommand(SettingsSet, ['order.expiration_minutes', '20'])).exitCode, 0)
    assert.strictEqual(await settings.get('order.expiration_minutes'), 20)
    const refused = await runCommand(SettingsSet, ['order.expiration_minutes', 'soon'])
    assert.equal(refused.exitCode, 1)
    assert.match(refused.output, /whole number/)
    assert.equal((await runCommand(SettingsSet, ['nope', '1'])).exitCode, 1)

    const one = await runCommand(SettingsGet, ['order.expiration_minutes'])
    assert.equal(one.output.trim(), '20')
    await settings.set('provider.shop_token', 'very-secret-token')
    const all = await runCommand(SettingsGet, [])
    assert.include(all.output, 'compat.default_currency')
    assert.notInclude(all.output, 'very-secret-token')
  })

  test('orders:close expires a waiting order; its amount stays reserved for the late-payment grace', async ({
    client,
    assert,
  }) => {
    await makeTronPayable()
    const tradeId = (await createOrder(client, orderParams())).body().data.trade_id
    assert.equal(await countRows('amount_locks'), 1)
    const result = await runCommand(OrdersClose, [tradeId])
    assert.equal(result.exitCode, 0, result.output)
    assert.equal((await Order.findByOrFail('trade_id', tradeId)).status, 3)
    assert.equal(await countRows('amount_locks'), 1)
    // the amount is not handed out again yet
    const next = (await createOrder(client, orderParams())).body().data
    assert.strictEqual(next.actual_amount, 13.81)
  })

  test('orders:close closes placeholders; refuses closed and unknown orders', async ({
    client,
    assert,
  }) => {
    const tradeId = (
      await createOrder(client, orderParams({ token: undefined, network: undefined }))
    ).body().data.trade_id
    assert.equal((await runCommand(OrdersClose, [tradeId])).exitCode, 0)
    assert.equal((await Order.findByOrFail('trade_id', tradeId)).status, 3)
    const again = await runCommand(OrdersClose, [tradeId])
    assert.equal(again.exitCode, 1)
    assert.match(again.output, /not open/)
    assert.equal((await runCommand(OrdersClose, ['nope'])).exitCode, 1)
  })

  test('chain:set --api-key "" clears the key (run as a process)', async ({ assert }) => {
    const set = await runAce(['chain:set', 'tron', '--api-key', 'tron-key-0123'])
    assert.equal(set.code, 0, set.stderr + set.stdout)
    assert.equal((await Chain.findByOrFail('network', 'tron')).rpcApiKey(), 'tron-key-0123')
    const cleared = await runAce(['chain:set', 'tron', '--api-key', ''])
    assert.equal(cleared.code, 0, cleared.stderr + cleared.stdout)
    assert.equal((await Chain.findByOrFail('network', 'tron')).rpcApiKey(), '')
  }).timeout(90_000)

  test('commands exit non-zero with the message on stderr when run as processes', async ({
    assert,
  }) => {
    const refused = await runAce(['wallet:add', 'tron', 'not-an-address'])
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /not a TRON address/)
    const accepted = await runAce(['wallet:add', 'tron', TRON_WALLET])
    assert.equal(accepted.code, 0, accepted.stderr)
    assert.match(accepted.stdout, /Added wallet/)
  }).timeout(90_000)
})
