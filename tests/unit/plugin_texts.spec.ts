import { test } from '@japa/runner'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import app from '@adonisjs/core/services/app'
import { argumentsOf, flattenTexts } from '#tests/helpers/catalogue_texts'

const CONSOLE_LANGUAGES = ['en', 'zh-CN']

/** Every text file a bundled plugin brings in English: plugins/<name>/lang/en/<file>.json. */
function englishFiles(): { plugin: string; file: string }[] {
  return readdirSync(app.makePath('plugins'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const folder = app.makePath('plugins', entry.name, 'lang', 'en')
      if (!existsSync(folder)) return []
      return readdirSync(folder)
        .filter((file) => file.endsWith('.json'))
        .map((file) => ({ plugin: entry.name, file }))
    })
}

test.group('Bundled plugins: their console texts in every console language', () => {
  test('each lang/en/*.json of a plugin has its twin in zh-CN, with the same keys and arguments', ({
    assert,
  }) => {
    const files = englishFiles()
    // The channel, provider, flavour, family and rate plugins bring settings.json or admin.json.
    assert.isAbove(files.length, 10)
    for (const { plugin, file } of files) {
      const read = (locale: string) =>
        flattenTexts(
          JSON.parse(readFileSync(app.makePath('plugins', plugin, 'lang', locale, file), 'utf8'))
        )
      const english = read('en')
      for (const locale of CONSOLE_LANGUAGES.slice(1)) {
        const path = `plugins/${plugin}/lang/${locale}/${file}`
        assert.isTrue(existsSync(app.makePath(path)), `${path} is missing`)
        const translated = read(locale)
        assert.deepEqual(Object.keys(translated).sort(), Object.keys(english).sort(), path)
        for (const [key, text] of Object.entries(english))
          assert.deepEqual(argumentsOf(translated[key]), argumentsOf(text), `${path}: ${key}`)
      }
    }
  })

  test('the argument reader sees plain and plural arguments', ({ assert }) => {
    assert.deepEqual(argumentsOf('{count, plural, one {# order} other {# orders}} on {network}'), [
      'count',
      'network',
    ])
    assert.deepEqual(argumentsOf('no argument'), [])
  })
})
