import { test } from '@japa/runner'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import hash from '@adonisjs/core/services/hash'
import db from '@adonisjs/lucid/services/db'
import ApiKey from '#models/api_key'
import Chain from '#models/chain'
import Token from '#models/token'
import User from '#models/user'
import installation from '#services/installation_service'
import settings from '#settings/settings_service'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { CREATE_PATH, TRON_WALLET, merchantSign, orderParams } from '#tests/helpers/merchant'
import { runAce, startServerProcess } from '#tests/helpers/processes'
import { SEEDED_NETWORKS } from '#tests/helpers/seeded_networks'
import { loadOrCreateAppKey } from '#support/crypto/app_key'
import { compatSettings } from '#plugins/compat/compat_settings'

test.group('Installation defaults', (group) => {
  group.each.setup(() => resetDatabase())

  test('API key 1000 from INITIAL_API_SECRET, compat defaults, chains and tokens, admin', async ({
    assert,
  }) => {
    const key = await ApiKey.findByOrFail('pid', '1000')
    assert.equal(key.signingSecret(), 'test-secret-0123456789abcdef')
    assert.notInclude(key.secretKey, 'test-secret-0123456789abcdef', 'stored encrypted')
    assert.equal(key.status, 'active')

    assert.equal(await compatSettings.get('compat.default_currency'), 'cny')
    assert.equal(await compatSettings.get('compat.default_token'), '')
    assert.equal(await compatSettings.get('compat.default_network'), '')

    const networks = (await Chain.query().orderBy('sort_order')).map((chain) => chain.network)
    assert.deepEqual(networks, SEEDED_NETWORKS)
    const usdtOnTron = await Token.query()
      .where('network', 'tron')
      .where('symbol', 'USDT')
      .firstOrFail()
    assert.equal(usdtOnTron.contract, 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')
    assert.equal(usdtOnTron.decimals, 6)
    const usdtOnBsc = await Token.query()
      .where('network', 'bsc')
      .where('symbol', 'USDT')
      .firstOrFail()
    assert.equal(usdtOnBsc.decimals, 18)
    const eth = await Token.query()
      .where('network', 'ethereum')
      .where('symbol', 'ETH')
      .firstOrFail()
    assert.isNull(eth.contract)
    assert.equal(eth.decimals, 18)
    for (const network of networks) {
      const symbols = (await Token.query().where('network', network)).map((token) => token.symbol)
      // Tether issues no USDT on Base: its dollar there is Circle's USDC.
      assert.include(symbols, network === 'base' ? 'USDC' : 'USDT', network)
    }
    assert.equal(await countRows('wallets'), 0)

    const admin = await User.findByOrFail('email', 'admin@example.test')
    assert.isTrue(await hash.verify(admin.password, 'test-admin-password'))
  })

  test('is idempotent and never overwrites what an operator changed', async ({ assert }) => {
    await settings.set('compat.default_currency', 'usd')
    await settings.set('compat.default_token', 'usdt')
    await db.from('api_keys').where('pid', '1000').update({ secret_key: 'operator-rotated-secret' })
    await db.from('chains').where('network', 'tron').update({ enabled: false, confirmations: 3 })
    await db
      .from('tokens')
      .where('network', 'tron')
      .where('symbol', 'USDT')
      .update({ amount_precision: 5 })
    await db.from('tokens').where('network', 'tron').where('symbol', 'USDC').delete()
    const counts = [
      await countRows('chains'),
      await countRows('api_keys'),
      await countRows('users'),
    ]

    const printed: string[] = []
    await installation.prepare({ print: (line) => printed.push(line) })
    await installation.prepare({ print: (line) => printed.push(line) })

    assert.deepEqual(printed, [])
    assert.equal(await compatSettings.get('compat.default_currency'), 'usd')
    assert.equal(await compatSettings.get('compat.default_token'), 'usdt')
    assert.equal(
      (await ApiKey.findByOrFail('pid', '1000')).signingSecret(),
      'operator-rotated-secret'
    )
    const tron = await Chain.findByOrFail('network', 'tron')
    assert.isFalse(tron.enabled)
    assert.equal(tron.confirmations, 3)
    const usdt = await Token.query().where('network', 'tron').where('symbol', 'USDT').firstOrFail()
    assert.equal(usdt.amountPrecision, 5)
    // a missing default token is installed again
    assert.isNotNull(await Token.query().where('network', 'tron').where('symbol', 'USDC').first())
    assert.deepEqual(
      [await countRows('chains'), await countRows('api_keys'), await countRows('users')],
      counts
    )
  })

  test('APP_KEY is generated once into storage/app_key and reused', ({ assert }) => {
    const root = mkdtempSync(join(tmpdir(), 'gateway-key-'))
    try {
      const url = new URL(`file://${root}/`)
      const first = loadOrCreateAppKey(url)
      assert.isAtLeast(first.length, 32)
      assert.equal(loadOrCreateAppKey(url), first)
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})

test.group('Concurrent first start', () => {
  test('two processes installing one empty database at once both succeed', async ({
    assert,
    cleanup,
  }) => {
    const fresh: Record<string, string | undefined> = {
      INITIAL_API_SECRET: undefined,
      ADMIN_EMAIL: undefined,
      ADMIN_PASSWORD: undefined,
    }
    if (db.connection().dialect.name === 'postgres') {
      await db.connection().rawQuery('DROP DATABASE IF EXISTS gateway_race_install')
      await db.connection().rawQuery('CREATE DATABASE gateway_race_install')
      fresh.PG_DB_NAME = 'gateway_race_install'
      cleanup(async () => {
        await db.connection().rawQuery('DROP DATABASE IF EXISTS gateway_race_install')
      })
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'gateway-race-'))
      cleanup(() => rmSync(dir, { recursive: true, force: true }))
      fresh.SQLITE_PATH = join(dir, 'race.sqlite3')
    }
    const results = await Promise.all([runAce(['setup'], fresh), runAce(['setup'], fresh)])
    for (const result of results) assert.equal(result.code, 0, result.stderr + result.stdout)
    const secrets = results
      .map((result) => /secret_key: ([0-9a-f]{64})/.exec(result.stdout)?.[1])
      .filter(Boolean)
    assert.lengthOf(secrets, 1, 'exactly one process created the API key and printed its secret')
  }).timeout(60_000)
})

/**
 * The newcomer's path, on a database that has never been used:
 * `npm start` → wallet:add → rate:set → a signed create → payment_url 301.
 */
test.group('Zero-setup start', () => {
  test('a fresh database: start, add a wallet and a rate, create an order', async ({
    assert,
    cleanup,
  }) => {
    const fresh: Record<string, string | undefined> = {
      INITIAL_API_SECRET: undefined,
      ADMIN_EMAIL: undefined,
      ADMIN_PASSWORD: undefined,
    }
    if (db.connection().dialect.name === 'postgres') {
      await db.connection().rawQuery('DROP DATABASE IF EXISTS gateway_fresh_install')
      await db.connection().rawQuery('CREATE DATABASE gateway_fresh_install')
      fresh.PG_DB_NAME = 'gateway_fresh_install'
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'gateway-fresh-'))
      cleanup(() => rmSync(dir, { recursive: true, force: true }))
      fresh.SQLITE_PATH = join(dir, 'fresh.sqlite3')
    }

    const server = await startServerProcess(fresh)
    cleanup(() => server.stop())
    const secret = server.output().match(/secret_key: ([0-9a-f]{64})/)?.[1]
    assert.isString(secret, server.output())
    assert.match(server.output(), /password: \S{12,}/)

    const wallet = await runAce(['wallet:add', 'tron', TRON_WALLET], fresh)
    assert.equal(wallet.code, 0, wallet.stderr)
    const rate = await runAce(['rate:set', 'USDT', 'CNY', '7.25'], fresh)
    assert.equal(rate.code, 0, rate.stderr)

    const params = orderParams({ amount: 100 })
    const response = await fetch(`${server.url}${CREATE_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...params, signature: merchantSign(params, secret!) }),
    })
    const body = (await response.json()) as any
    assert.equal(response.status, 200, JSON.stringify(body))
    assert.equal(body.data.status, 1)
    assert.equal(body.data.receive_address, TRON_WALLET)
    assert.strictEqual(body.data.actual_amount, 13.8)
    assert.isTrue(body.data.payment_url.startsWith(server.url))

    const page = await fetch(body.data.payment_url, { redirect: 'manual' })
    assert.equal(page.status, 301)
    assert.equal(page.headers.get('location'), `/cashier/${body.data.trade_id}`)

    // A restart keeps everything and prints no new secret.
    await server.stop()
    const again = await startServerProcess(fresh)
    cleanup(() => again.stop())
    assert.notMatch(again.output(), /secret_key/)
    const status = await fetch(`${again.url}/pay/check-status/${body.data.trade_id}`)
    assert.equal(((await status.json()) as any).data.status, 1)

    await again.stop()
    if (fresh.PG_DB_NAME)
      await db.connection().rawQuery('DROP DATABASE IF EXISTS gateway_fresh_install')
  }).timeout(120_000)
})
