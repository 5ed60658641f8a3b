import { test } from '@japa/runner'
import { existsSync, readdirSync } from 'node:fs'
import app from '@adonisjs/core/services/app'
import { LANGUAGES, messagesOf, translator } from '#cashier/languages'
import { SCRIPT_KEYS } from '#cashier/cashier_page'
import i18nManager from '@adonisjs/i18n/services/main'

/** The ICU arguments a text uses: `{name}`, and `{count, plural, …}`'s `count`. */
const placeholders = (text: string) =>
  [...new Set([...text.matchAll(/\{\s*(\w+)\s*[,}]/g)].map((match) => match[1]))].sort()

test.group('Cashier translations', () => {
  test('one catalogue folder per language with its cashier.json, and no other', ({ assert }) => {
    const folders = readdirSync(app.makePath('resources', 'lang'), { withFileTypes: true })
    assert.deepEqual(
      folders.filter((entry) => !entry.isDirectory()).map((entry) => entry.name),
      [],
      'no loose file: the loader would read it as a whole locale'
    )
    assert.sameMembers(
      folders.map((entry) => entry.name),
      [...LANGUAGES]
    )
    for (const language of LANGUAGES)
      assert.isTrue(
        existsSync(app.makePath('resources', 'lang', language, 'cashier.json')),
        language
      )
  })

  test("the script's texts keep plain {name} placeholders (it fills them itself)", ({ assert }) => {
    for (const language of LANGUAGES) {
      const messages = messagesOf(language)
      for (const key of Object.keys(messages).filter(
        (name) => SCRIPT_KEYS.includes(name) || name.startsWith('error.')
      ))
        assert.notMatch(messages[key], /\{\s*\w+\s*,/, `${language} ${key}`)
    }
  })

  test('every key of English exists in every language, and no extra key', ({ assert }) => {
    const english = Object.keys(messagesOf('en')).sort()
    for (const language of LANGUAGES) {
      const keys = Object.keys(messagesOf(language)).sort()
      assert.deepEqual(
        {
          language,
          missing: english.filter((key) => !keys.includes(key)),
          extra: keys.filter((key) => !english.includes(key)),
        },
        { language, missing: [], extra: [] }
      )
    }
  })

  test('every text is non-empty and keeps the placeholders of English', ({ assert }) => {
    const english = messagesOf('en')
    for (const language of LANGUAGES) {
      const messages = messagesOf(language)
      for (const [key, text] of Object.entries(english)) {
        assert.isString(messages[key], `${language} ${key}`)
        assert.isAbove(messages[key].trim().length, 0, `${language} ${key}`)
        assert.deepEqual(placeholders(messages[key]), placeholders(text), `${language} ${key}`)
      }
    }
  })

  test("the plugins' cashier texts exist in every cashier language with English's arguments", ({
    assert,
  }) => {
    const pluginKeys = (language: string) =>
      Object.fromEntries(
        Object.entries(i18nManager.getTranslationsFor(language)).filter(([key]) =>
          /^plugins\.[^.]+\.cashier\./.test(key)
        )
      ) as Record<string, string>
    const english = pluginKeys('en')
    assert.isString(english['plugins.ton.cashier.hash_intro'], "TON's own, from plugins/ton/lang")
    for (const language of LANGUAGES) {
      const messages = pluginKeys(language)
      assert.sameMembers(Object.keys(messages), Object.keys(english), language)
      for (const [key, text] of Object.entries(english))
        assert.deepEqual(placeholders(messages[key]), placeholders(text), `${language} ${key}`)
    }
  })

  test('every language names itself differently in the switcher', ({ assert }) => {
    const names = LANGUAGES.map((code) => messagesOf(code).language_name)
    assert.equal(new Set(names).size, LANGUAGES.length)
  })

  test('the spec errors a payer can meet have a sentence', ({ assert }) => {
    for (const code of [
      10003, 10005, 10006, 10007, 10008, 10011, 10012, 10013, 10014, 10016, 10017, 10018, 10019,
    ]) {
      assert.isString(messagesOf('en')[`error.${code}`], String(code))
    }
  })

  test('the translator fills placeholders and falls back to the key', ({ assert }) => {
    const t = translator('ru')
    assert.equal(t('confirming.progress', { n: 3, m: 12 }), 'Платёж найден, 3 из 12 подтверждений')
    assert.equal(t('no.such.key'), 'no.such.key')
  })
})
