import walletAdmin from '#services/operators/wallet_admin'
import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import { readFileSync } from 'node:fs'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import { resetDatabase } from '#tests/helpers/database'
import { TRON_WALLET } from '#tests/helpers/merchant'

const CONFIG_PATH = '/payments/native/v1/config'
const EVM_WALLET = '0x52908400098527886E0F7030069857D2E4169EE7'

test.group('Public config', (group) => {
  group.each.setup(() => resetDatabase())

  test('a fresh installation offers no asset: chains need a wallet first', async ({
    client,
    assert,
  }) => {
    const response = await client.get(CONFIG_PATH)
    response.assertStatus(200)
    const body = response.body()
    assert.equal(body.status_code, 200)
    assert.deepEqual(body.data.supported_assets, [])
    assert.deepEqual(Object.keys(body.data).sort(), [
      'compat',
      'provider',
      'site',
      'supported_assets',
      'version',
    ])
  })

  test('lists enabled chains with wallets and enabled tokens, tokens upper-case', async ({
    client,
    assert,
  }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    await walletAdmin.add('bsc', EVM_WALLET)
    await walletAdmin.add('polygon', EVM_WALLET)
    await walletAdmin.add('plasma', EVM_WALLET)
    await chainAdmin.set('polygon', { enabled: false })
    await chainAdmin.setToken('plasma', 'USDT', { enabled: false })
    await chainAdmin.setToken('plasma', 'XPL', { enabled: false })
    await chainAdmin.setToken('bsc', 'usdc', { enabled: false })

    const assets = (await client.get(CONFIG_PATH)).body().data.supported_assets
    assert.deepEqual(assets, [
      { network: 'tron', display_name: 'TRON', tokens: ['USDT', 'USDC', 'TRX'] },
      { network: 'bsc', display_name: 'BNB Smart Chain', tokens: ['USDT', 'BNB'] },
    ])
  })

  test('a chain whose only wallet is disabled is not offered', async ({ client, assert }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    await db.from('wallets').update({ enabled: false })
    assert.deepEqual((await client.get(CONFIG_PATH)).body().data.supported_assets, [])
  })

  test('site, compat and provider objects reflect the settings', async ({ client, assert }) => {
    await settings.set('site.cashier_name', 'Acme Pay')
    await settings.set('site.background_color', '#112233')
    await settings.set('compat.default_token', 'USDT')
    await settings.set('compat.default_network', 'Tron')
    await settings.set('provider.enabled', 'true')
    await settings.set('provider.allow_tokens', 'usdt, trx,usdc')

    const data = (await client.get(CONFIG_PATH)).body().data
    assert.deepEqual(data.site, {
      cashier_name: 'Acme Pay',
      logo_url: '',
      website_title: 'Crypto Payment',
      support_link: '',
      background_color: '#112233',
      background_image_url: '',
    })
    assert.deepEqual(data.compat, {
      default_token: 'usdt',
      default_currency: 'cny',
      default_network: 'tron',
    })
    assert.deepEqual(data.provider, { enabled: true, allow_tokens: ['USDT', 'TRX', 'USDC'] })
  })

  test('emptied compat defaults are returned as empty strings', async ({ client, assert }) => {
    await settings.set('compat.default_currency', '')
    const data = (await client.get(CONFIG_PATH)).body().data
    assert.strictEqual(data.compat.default_currency, '')
    assert.strictEqual(data.compat.default_token, '')
  })

  test('version is the package.json version', async ({ client, assert }) => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
    assert.equal((await client.get(CONFIG_PATH)).body().data.version, pkg.version)
  })
})
