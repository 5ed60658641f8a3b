import { test } from '@japa/runner'
import router from '@adonisjs/core/services/router'
import pluginRegistry, { type PluginRegistry } from '#plugin_host/plugin_registry'
import { listedRoutes, pluginCatalog } from '#plugin_host/plugin_catalog'
import pluginsConfig from '#config/plugins'
import { resetDatabase } from '#tests/helpers/database'
import demo from '#tests/fixtures/plugins/demo/plugin'
import { SEEDED_EVM_NETWORKS } from '#tests/helpers/seeded_networks'

test.group('Plugin catalog: what each plugin brings', (group) => {
  group.each.setup(() => resetDatabase())

  test('every configured plugin, on, with its families and their networks, routes as mounted, settings', async ({
    assert,
  }) => {
    const catalog = await pluginCatalog({ routes: listedRoutes(router.toJSON()) })
    assert.deepEqual(
      catalog.plugins.map((plugin) => [plugin.name, plugin.enabled]),
      Object.keys(pluginsConfig).map((name) => [name, true])
    )
    assert.equal(catalog.selection, process.env.PLUGINS ?? '')

    const evm = catalog.plugins.find((plugin) => plugin.name === 'evm')!
    assert.deepEqual(evm.families, [
      {
        name: 'evm',
        addressFormat: '0x followed by 40 hex characters (EIP-55 checksum if mixed-case)',
        networks: SEEDED_EVM_NETWORKS,
        canScan: true,
        canVerify: true,
        canTestConnection: true,
        paymentUris: true,
      },
    ])
    assert.deepEqual(evm.seedNetworks, SEEDED_EVM_NETWORKS)
    assert.isNull(evm.routePrefix)
    assert.deepEqual(evm.routes, [])

    const compat = catalog.plugins.find((plugin) => plugin.name === 'compat')!
    assert.deepEqual(compat.callbackFormats, ['compat'])
    assert.equal(compat.routePrefix, '/payments/compat/v1')
    assert.deepEqual(compat.routes, [
      {
        pattern: '/payments/compat/v1/order/create-transaction/submit.php',
        methods: ['GET', 'POST'],
      },
      {
        pattern: '/payments/compat/v1/order/create-transaction/mapi.php',
        methods: ['GET', 'POST'],
      },
      { pattern: '/payments/compat/v1/order/create-transaction/api.php', methods: ['GET', 'POST'] },
    ])
    assert.deepEqual(compat.configSections, ['compat'])
    assert.includeMembers(
      compat.settings.map((setting) => setting.key),
      ['compat.default_currency', 'compat.default_token', 'compat.default_network']
    )

    const provider = catalog.plugins.find((plugin) => plugin.name === 'provider')!
    assert.deepEqual(provider.routes, [
      { pattern: '/payments/provider/v1/notify', methods: ['POST'] },
    ])
    const token = provider.settings.find((setting) => setting.key === 'provider.shop_token')!
    assert.isTrue(token.secret)
    assert.deepEqual(provider.providers, ['provider'])
  })

  test('a plugin that is off: listed as off, without routes; the commands of a third-party plugin', async ({
    assert,
  }) => {
    const registry = {
      all: [...pluginRegistry.all, demo],
      isEnabled: (name: string) => name !== 'compat' && name !== 'demo',
    } as unknown as PluginRegistry
    const catalog = await pluginCatalog({ routes: listedRoutes(router.toJSON()), registry })
    const compat = catalog.plugins.find((plugin) => plugin.name === 'compat')!
    assert.isFalse(compat.enabled)
    assert.equal(compat.routePrefix, '/payments/compat/v1')
    assert.deepEqual(compat.routes, [])

    const listed = catalog.plugins.find((plugin) => plugin.name === 'demo')!
    assert.isFalse(listed.enabled)
    assert.deepEqual(listed.commands, [
      { name: 'demo:greet', description: 'Prints the demo greeting setting' },
    ])
    assert.deepEqual(
      listed.families.map((family) => [family.name, family.networks, family.canTestConnection]),
      [['demo', [], false]]
    )
    assert.deepEqual(listed.seedNetworks, ['demonet'])
    assert.deepEqual(listed.settings, [
      {
        key: 'demo.greeting',
        description: 'What GET /payments/demo/v1/hello answers',
        secret: false,
      },
    ])
  })
})
