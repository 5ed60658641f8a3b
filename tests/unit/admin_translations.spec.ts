import { test } from '@japa/runner'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import app from '@adonisjs/core/services/app'
import i18nManager from '@adonisjs/i18n/services/main'
import { ADMIN_LOCALES } from '#admin/admin_locale'
import pluginRegistry from '#plugin_host/plugin_registry'
import { FAMILY_CONSOLE_TEXTS } from '#controllers/admin/chains_controller'
import { OperatorError } from '#support/cli/operator_error'
import { REFUSALS_PREFIX, refusalText } from '#admin/refusal_text'
import { argumentsOf, flattenTexts } from '#tests/helpers/catalogue_texts'

/** The console's texts of a locale (keys `console.<area>.…`), as the catalogue holds them. */
function adminMessages(locale: string): Record<string, string> {
  const messages: Record<string, string> = {}
  for (const [key, text] of Object.entries(i18nManager.getTranslationsFor(locale)))
    if (key.startsWith('admin.')) messages[key] = String(text)
  return messages
}

function filesUnder(dir: string, extensions: string[]): string[] {
  const found: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) found.push(...filesUnder(path, extensions))
    else if (extensions.some((extension) => entry.name.endsWith(extension))) found.push(path)
  }
  return found
}

/**
 * Every `t('console.…')` / `i18n.t('console.…')` in the views and the code:
 * a whole key, or a prefix when the key is built (`t('admin.common.nav.' + key)`).
 */
function keysUsed(): { file: string; key: string; prefix: boolean }[] {
  const files = [
    ...filesUnder(app.makePath('resources', 'views'), ['.edge']),
    ...filesUnder(app.makePath('app'), ['.ts']),
    ...filesUnder(app.makePath('plugins'), ['.ts', '.edge']),
  ]
  const used: { file: string; key: string; prefix: boolean }[] = []
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    for (const match of text.matchAll(/\bt\(\s*'(admin\.[\w.-]+)'\s*(\+)?/g))
      used.push({ file: relative(app.makePath(), file), key: match[1], prefix: match[2] === '+' })
  }
  return used
}

test.group('Console translations', () => {
  test('every console key of English exists in every console language, with the same arguments', ({
    assert,
  }) => {
    const english = adminMessages('en')
    assert.isAbove(Object.keys(english).length, 20)
    for (const locale of ADMIN_LOCALES) {
      const messages = adminMessages(locale)
      const missing = Object.keys(english).filter((key) => !(key in messages))
      const extra = Object.keys(messages).filter((key) => !(key in english))
      assert.deepEqual({ locale, missing, extra }, { locale, missing: [], extra: [] })
      for (const [key, text] of Object.entries(english)) {
        assert.isAbove(messages[key].trim().length, 0, `${locale} ${key} is empty`)
        assert.deepEqual(argumentsOf(messages[key]), argumentsOf(text), `${locale} ${key}`)
      }
    }
  })

  test('every text is a valid ICU message in its locale', ({ assert }) => {
    for (const locale of ADMIN_LOCALES) {
      const i18n = i18nManager.locale(locale)
      for (const [key, text] of Object.entries(adminMessages(locale))) {
        const values = Object.fromEntries(argumentsOf(text).map((name) => [name, 2]))
        let formatted = ''
        try {
          formatted = i18n.formatMessage(key, values)
        } catch (error) {
          assert.fail(`${locale} ${key}: ${(error as Error).message}`)
        }
        assert.notInclude(formatted, 'translation missing', `${locale} ${key}`)
      }
    }
  })

  test('every key the views and the code ask for is in the catalogue', ({ assert }) => {
    const english = adminMessages('en')
    const keys = Object.keys(english)
    const used = keysUsed()
    assert.isAbove(used.length, 10)
    const unknown = used.filter(({ key, prefix }) =>
      prefix ? !keys.some((known) => known.startsWith(key)) : !(key in english)
    )
    assert.deepEqual(
      unknown.map(({ file, key }) => `${file}: ${key}`),
      []
    )
  })
})

/** The bundled plugins (plugins/<name>) that bring console texts (`lang/en/admin.json`). */
function pluginsWithAdminTexts(): string[] {
  return readdirSync(app.makePath('plugins'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .filter((name) => existsSync(app.makePath('plugins', name, 'lang', 'en', 'admin.json')))
}

/**
 * Every refusal key the code gives (`key: '…'` in a file that uses
 * #support/cli/operator_error): the console looks it up under `admin.refusals.`.
 */
function refusalKeysUsed(): { file: string; key: string }[] {
  const used: { file: string; key: string }[] = []
  for (const file of filesUnder(app.makePath('app'), ['.ts'])) {
    const text = readFileSync(file, 'utf8')
    if (!text.includes('#support/cli/operator_error')) continue
    for (const match of text.matchAll(/\bkey: '([\w-]+)'/g))
      used.push({ file: relative(app.makePath(), file), key: match[1] })
  }
  return used
}

test.group('Console translations of the refusals', () => {
  test('every refusal key the code gives is in the catalogue, and every catalogued one is given', ({
    assert,
  }) => {
    const english = adminMessages('en')
    const used = refusalKeysUsed()
    assert.isAbove(used.length, 100)
    assert.deepEqual(
      used
        .filter(({ key }) => !(`${REFUSALS_PREFIX}${key}` in english))
        .map(({ file, key }) => `${file}: ${key}`),
      []
    )
    const given = new Set(used.map(({ key }) => key))
    const catalogued = Object.keys(english)
      .filter((key) => key.startsWith(REFUSALS_PREFIX))
      .map((key) => key.slice(REFUSALS_PREFIX.length))
    assert.deepEqual(
      catalogued.filter((key) => !given.has(key)),
      []
    )
  })

  test('a keyed refusal is said in the admin language; unkeyed or unknown ones stay English', ({
    assert,
  }) => {
    const keyed = new OperatorError('Unknown network "x". Known networks: tron, bsc', {
      key: 'unknown_network',
      args: { network: 'x', known: 'tron, bsc' },
    })
    assert.equal(refusalText(i18nManager.locale('en'), keyed), keyed.message)
    assert.equal(
      refusalText(i18nManager.locale('zh-CN'), keyed),
      '未知网络“x”。已知网络：tron, bsc'
    )
    // Numbers are shown as written (no grouping), as in the English message.
    const long = new OperatorError('An RPC URL is at most 2000 characters', {
      key: 'rpc_url_too_long',
      args: { max: 2000 },
    })
    assert.equal(refusalText(i18nManager.locale('en'), long), long.message)
    assert.equal(refusalText(i18nManager.locale('zh-CN'), long), 'RPC URL 最多 2000 个字符')
    const plain = new OperatorError('Something else')
    assert.equal(refusalText(i18nManager.locale('zh-CN'), plain), 'Something else')
    const unknown = new OperatorError('Not catalogued', { key: 'no_such_refusal_key' })
    assert.equal(refusalText(i18nManager.locale('zh-CN'), unknown), 'Not catalogued')
  })
})

test.group('Console translations of the plugins', () => {
  test('a bundled plugin admin.json has every English key in every console language, with the same arguments', ({
    assert,
  }) => {
    const names = pluginsWithAdminTexts()
    assert.includeMembers(names, ['tron', 'evm', 'ton'])
    for (const name of names) {
      const english = flattenTexts(
        JSON.parse(readFileSync(app.makePath('plugins', name, 'lang', 'en', 'admin.json'), 'utf8'))
      )
      for (const locale of ADMIN_LOCALES) {
        const file = app.makePath('plugins', name, 'lang', locale, 'admin.json')
        assert.isTrue(existsSync(file), `plugins/${name}/lang/${locale}/admin.json`)
        const messages = flattenTexts(JSON.parse(readFileSync(file, 'utf8')))
        assert.deepEqual(
          Object.keys(messages).sort(),
          Object.keys(english).sort(),
          `${name} ${locale}`
        )
        // Loaded into the catalogue under the plugin's prefix (its definePlugin names its folder).
        const i18n = i18nManager.locale(locale)
        for (const [key, text] of Object.entries(english)) {
          const full = `plugins.${name}.admin.${key}`
          assert.isTrue(i18n.hasMessage(full), `${locale} ${full} is not in the catalogue`)
          assert.deepEqual(argumentsOf(messages[key]), argumentsOf(text), `${locale} ${full}`)
          const formatted = i18n.formatMessage(
            full,
            Object.fromEntries(argumentsOf(text).map((arg) => [arg, 2]))
          )
          assert.notInclude(formatted, 'translation missing', `${locale} ${full}`)
        }
      }
    }
  })

  test("a family's plugin brings only the console texts the chain pages ask for", ({ assert }) => {
    const familyPlugins = new Set(
      pluginRegistry.all.filter((plugin) => plugin.families?.length).map((plugin) => plugin.name)
    )
    for (const name of pluginsWithAdminTexts().filter((plugin) => familyPlugins.has(plugin))) {
      const keys = Object.keys(
        flattenTexts(
          JSON.parse(
            readFileSync(app.makePath('plugins', name, 'lang', 'en', 'admin.json'), 'utf8')
          )
        )
      )
      const unknown = keys.filter(
        (key) =>
          !FAMILY_CONSOLE_TEXTS.some((known) =>
            known.endsWith('.') ? key.startsWith(known) : key === known
          )
      )
      assert.deepEqual(unknown, [], `plugins/${name}/lang/en/admin.json`)
    }
  })

  test('every literal plugins.<name>.admin key the code asks for (t(), pluginReason()) is in en and zh-CN', ({
    assert,
  }) => {
    const files = [
      ...filesUnder(app.makePath('resources', 'views'), ['.edge']),
      ...filesUnder(app.makePath('app'), ['.ts']),
      ...filesUnder(app.makePath('plugins'), ['.ts', '.edge']),
    ]
    const missing: string[] = []
    for (const file of files) {
      const text = readFileSync(file, 'utf8')
      const keys = [
        ...[...text.matchAll(/\bt\(\s*'(plugins\.[\w-]+\.admin\.[\w.-]+)'/g)].map((m) => m[1]),
        // A plugin's reasons: pluginReason('evm', 'bad_checksum', …).
        ...[...text.matchAll(/\bpluginReason\(\s*'([\w-]+)',\s*'([\w.-]+)'/g)].map(
          (m) => `plugins.${m[1]}.admin.refusals.${m[2]}`
        ),
      ]
      for (const key of keys)
        for (const locale of ADMIN_LOCALES)
          if (!i18nManager.locale(locale).hasMessage(key))
            missing.push(`${relative(app.makePath(), file)}: ${locale} ${key}`)
    }
    assert.deepEqual(missing, [])
  })
})
