import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Token from '#models/token'
import installation from '#services/installation_service'
import chainAdmin from '#services/operators/chain_admin'
import walletAdmin from '#services/operators/wallet_admin'
import { resetDatabase } from '#tests/helpers/database'
import { runCommand } from '#tests/helpers/ace_command'
import WalletAdd from '#commands/wallet_add'

/**
 * The EVM networks seeded after Plasma, as their issuers list them (Tether's
 * USDT0 deployments for USDT, Circle's list for USDC; docs/getting-started.md
 * says which older bridged contracts were left out).
 */
const NETWORKS = [
  {
    network: 'arbitrum',
    displayName: 'Arbitrum One',
    chainId: 42161,
    blockTimeMs: 250,
    scanIntervalSeconds: 1,
    confirmations: 60,
    explorer: 'https://arbiscan.io/tx/{tx}',
    rpc: 'https://arb1.arbitrum.io/rpc',
    tokens: {
      USDT: ['0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9', 6, 2],
      USDC: ['0xaf88d065e77c8cC2239327C5EDb3A432268e5831', 6, 2],
      ETH: [null, 18, 6],
    },
  },
  {
    network: 'base',
    displayName: 'Base',
    chainId: 8453,
    blockTimeMs: 2000,
    scanIntervalSeconds: 2,
    confirmations: 10,
    explorer: 'https://basescan.org/tx/{tx}',
    rpc: 'https://mainnet.base.org',
    // Tether issues no USDT on Base.
    tokens: {
      USDC: ['0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 6, 2],
      ETH: [null, 18, 6],
    },
  },
  {
    network: 'optimism',
    displayName: 'OP Mainnet',
    chainId: 10,
    blockTimeMs: 2000,
    scanIntervalSeconds: 2,
    confirmations: 10,
    explorer: 'https://optimistic.etherscan.io/tx/{tx}',
    rpc: 'https://mainnet.optimism.io',
    tokens: {
      USDT: ['0x01bFF41798a0BcF287b996046Ca68b395DbC1071', 6, 2],
      USDC: ['0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85', 6, 2],
      ETH: [null, 18, 6],
    },
  },
  {
    network: 'avalanche',
    displayName: 'Avalanche C-Chain',
    chainId: 43114,
    blockTimeMs: 2000,
    scanIntervalSeconds: 2,
    confirmations: 3,
    explorer: 'https://snowtrace.io/tx/{tx}',
    rpc: 'https://api.avax.network/ext/bc/C/rpc',
    tokens: {
      USDT: ['0x9702230A8Ea53601f5cD2dc00fDBc13d4dF4A8c7', 6, 2],
      USDC: ['0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E', 6, 2],
      AVAX: [null, 18, 4],
    },
  },
  {
    network: 'xlayer',
    displayName: 'X Layer',
    chainId: 196,
    blockTimeMs: 1000,
    scanIntervalSeconds: 1,
    confirmations: 20,
    explorer: 'https://www.oklink.com/xlayer/tx/{tx}',
    rpc: 'https://rpc.xlayer.tech',
    tokens: {
      USDT: ['0x779Ded0c9e1022225f8E0630b35a9b54bE713736', 6, 2],
      USDC: ['0xB6CEceAB302E2E4948951eE7843FC24E92933061', 6, 2],
      OKB: [null, 18, 5],
    },
  },
] as const

const NEW = NETWORKS.map((row) => row.network)

/** Every row of chains and tokens as stored, keyed, to compare before and after. */
type Row = Record<string, any>

async function storedRows(): Promise<{ chains: Record<string, Row>; tokens: Record<string, Row> }> {
  const chains: Row[] = await db.from('chains').orderBy('network')
  const tokens: Row[] = await db.from('tokens').orderBy(['network', 'symbol'])
  return {
    chains: Object.fromEntries(chains.map((row) => [row.network, row])),
    tokens: Object.fromEntries(tokens.map((row) => [`${row.network}/${row.symbol}`, row])),
  }
}

test.group('Seeded EVM networks: Arbitrum, Base, OP Mainnet, Avalanche, X Layer', (group) => {
  group.each.setup(() => resetDatabase())

  test('installed disabled, with their chain ids, block times, confirmations and the issuers’ contracts', async ({
    assert,
  }) => {
    for (const expected of NETWORKS) {
      const chain = await Chain.findByOrFail('network', expected.network)
      assert.equal(chain.family, 'evm', expected.network)
      assert.equal(chain.displayName, expected.displayName)
      assert.isFalse(chain.enabled, `${expected.network} waits for its RPC URL and a wallet`)
      assert.deepEqual(chain.options, { blockRange: 1000, chainId: expected.chainId })
      assert.deepEqual(chain.rpcUrls, [expected.rpc])
      assert.equal(chain.blockTimeMs, expected.blockTimeMs)
      assert.equal(chain.scanIntervalSeconds, expected.scanIntervalSeconds)
      assert.equal(chain.confirmations, expected.confirmations)
      assert.equal(chain.explorerTxUrl, expected.explorer)

      const tokens = await Token.query().where('network', expected.network).orderBy('symbol')
      assert.deepEqual(
        Object.fromEntries(
          tokens.map((token) => [
            token.symbol,
            [token.contract, token.decimals, token.amountPrecision, token.enabled],
          ])
        ),
        Object.fromEntries(
          Object.entries(expected.tokens).map(([symbol, [contract, decimals, precision]]) => [
            symbol,
            [contract, decimals, precision, true],
          ])
        ),
        expected.network
      )
    }
    assert.isNull(await Token.query().where('network', 'base').where('symbol', 'USDT').first())

    // After the chains seeded before them, in this order.
    const networks = (await Chain.query().orderBy('sort_order')).map((chain) => chain.network)
    assert.deepEqual(networks.slice(networks.indexOf('plasma') + 1, -2), NEW)
  })

  test('neither scanned nor offered nor warned about while disabled; enabled by the operator, a wallet makes one payable', async ({
    assert,
  }) => {
    const { default: chainScanner } = await import('#services/chain_scanner')
    const { chainSetupChecks } = await import('#services/doctor/chain_checks')
    const { default: assetCatalog } = await import('#services/asset_catalog')
    const wallets = walletAdmin
    const chains = chainAdmin
    await wallets.add('base', '0x52908400098527886E0F7030069857D2E4169EE7')
    const reports = await chainScanner.scan({})
    for (const network of NEW) {
      assert.notInclude(
        reports.map((report) => report.network),
        network
      )
    }
    const checks = JSON.stringify(await chainSetupChecks())
    for (const network of NEW) assert.notInclude(checks, network)
    const offered = (await assetCatalog.supportedAssets()).map((asset) => asset.network)
    for (const network of NEW) assert.notInclude(offered, network)
    await assert.rejects(() => assetCatalog.payable('base', 'USDC'), 'Chain is not enabled: base')

    await chains.set('base', { enabled: true })
    assert.deepInclude(await assetCatalog.supportedAssets(), {
      network: 'base',
      display_name: 'Base',
      tokens: ['USDC', 'ETH'],
    })
    assert.notInclude(JSON.stringify(await chainSetupChecks()), 'base is enabled without')
  })

  test('wallet:add on one of them says it is disabled and how to enable it', async ({ assert }) => {
    const added = await runCommand(WalletAdd, [
      'xlayer',
      '0x52908400098527886e0f7030069857d2e4169ee7',
    ])
    assert.equal(added.exitCode, 0, added.output)
    assert.include(
      added.output,
      'Added wallet 0x52908400098527886E0F7030069857D2E4169EE7 on xlayer'
    )
    assert.include(
      added.output,
      'xlayer is disabled: it takes orders once enabled, node ace chain:set xlayer --enable (check its RPC URLs first: node ace chain:list)'
    )
    const enabled = await runCommand(WalletAdd, [
      'ethereum',
      '0x52908400098527886e0f7030069857d2e4169ee7',
    ])
    assert.notInclude(enabled.output, 'disabled')
  })

  test('an installation made before them gains them at its next start, disabled and last; its own rows stay as they were', async ({
    assert,
  }) => {
    // The installation as an earlier release left it, changed by its operator.
    const operator = chainAdmin
    await db.from('tokens').whereIn('network', NEW).delete()
    await db.from('chains').whereIn('network', NEW).delete()
    await operator.set('ethereum', { confirmations: 7, rpcUrls: ['https://eth.example/rpc'] })
    await operator.set('tron', { enabled: false })
    await operator.setToken('polygon', 'USDT', { precision: 4 })
    await operator.setToken('bsc', 'USDC', { enabled: false })
    // The operator had added Arbitrum by hand, with USDT only and another RPC URL.
    await operator.set('arbitrum', {
      family: 'evm',
      displayName: 'Arbitrum (mine)',
      rpcUrls: ['https://arb.example/rpc'],
      options: { chainId: '42161' },
      confirmations: 30,
    })
    await operator.setToken('arbitrum', 'USDT', {
      contract: '0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9',
      decimals: 6,
      precision: 2,
    })
    const before = await storedRows()
    const lastSortOrder = Math.max(
      ...Object.values(before.chains).map((row) => Number(row.sort_order))
    )

    const printed: string[] = []
    await installation.prepare({ print: (line) => printed.push(line) })

    const after = await storedRows()
    for (const [key, row] of Object.entries(before.chains))
      assert.deepEqual(after.chains[key], row, `chain ${key} is left as it was`)
    for (const [key, row] of Object.entries(before.tokens))
      assert.deepEqual(after.tokens[key], row, `token ${key} is left as it was`)
    assert.deepEqual(printed, [])

    const added = NEW.filter((network) => network !== 'arbitrum')
    const gained = await Chain.query().whereIn('network', added).orderBy('sort_order')
    assert.deepEqual(
      gained.map((chain) => chain.network),
      added
    )
    for (const chain of gained) {
      assert.isFalse(chain.enabled, chain.network)
      assert.isAbove(chain.sortOrder, lastSortOrder, `${chain.network} comes after the others`)
    }
    assert.equal(
      new Set(Object.values(after.chains).map((row) => Number(row.sort_order))).size,
      Object.keys(after.chains).length,
      'no two chains share a place in the list'
    )
    // The new networks' tokens are enabled (the networks are not); a default
    // token missing from the operator's own Arbitrum is added disabled.
    const xlayerUsdt = await Token.query()
      .where('network', 'xlayer')
      .where('symbol', 'USDT')
      .firstOrFail()
    assert.isTrue(xlayerUsdt.enabled)
    const arbitrum = await Token.query().where('network', 'arbitrum').orderBy('symbol')
    assert.deepEqual(
      arbitrum.map((token) => [token.symbol, token.enabled]),
      [
        ['ETH', false],
        ['USDC', false],
        ['USDT', true],
      ]
    )

    // The next start changes nothing.
    const settled = await storedRows()
    await installation.prepare({ print: (line) => printed.push(line) })
    assert.deepEqual(await storedRows(), settled)
    assert.deepEqual(printed, [])
  })

  test('a network of that name in another family is left alone, and said so', async ({
    assert,
  }) => {
    await db.from('tokens').where('network', 'base').delete()
    await db.from('chains').where('network', 'base').delete()
    const operator = chainAdmin
    await operator.set('base', { family: 'tron', rpcUrls: ['https://api.trongrid.io'] })
    const before = await storedRows()

    const printed: string[] = []
    await installation.installDefaults((line) => printed.push(line))

    assert.deepEqual(await storedRows(), before)
    assert.deepEqual(printed, [
      'Left the chain base as it is: its family is "tron", not "evm"; its default tokens were not added.',
    ])
  })
})
