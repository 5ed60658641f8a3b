import { test } from '@japa/runner'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import app from '@adonisjs/core/services/app'

/**
 * The core knows no plugin: nothing under app/, start/ or resources/views
 * names a bundled plugin, what a plugin talks to, or the networks its seed
 * rows add, not even in a comment (docs/architecture.md, "The core knows no
 * chain, no provider and no flavour but native").
 *
 * Two plugins have names that are ordinary words of the core: `email` (an
 * administrator's e-mail address) and `provider` (the interface spec's
 * hosted-provider channel, `network: provider`, which every payment-provider
 * plugin serves). For those two, only a reference into the plugin itself
 * counts: its folder (`plugins/email`), its Edge disk (`email::`) or its
 * message keys (`plugins.email.`).
 */
const ORDINARY_WORDS = new Set(['email', 'provider'])

/** What the bundled plugins talk to and add, besides their own names. */
const PLUGIN_WORDS = [
  // services and protocols of the bundled plugins
  'epay',
  'trongrid',
  'toncenter',
  'coingecko',
  'binance',
  'okx',
  'kraken',
  'coinbase',
  'frankfurter',
  'smtp',
  // networks the bundled families' seed rows add, and their token standards
  'ethereum',
  'bsc',
  'polygon',
  'plasma',
  'arbitrum',
  'optimism',
  'avalanche',
  'xlayer',
  'trc20',
  'erc20',
  'bep20',
  'jetton',
]

function bundledPlugins(): string[] {
  return readdirSync(app.makePath('plugins')).filter((name) =>
    statSync(app.makePath('plugins', name)).isDirectory()
  )
}

function filesUnder(folder: string): string[] {
  const found: string[] = []
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) found.push(...filesUnder(path))
    else if (/\.(ts|edge)$/.test(entry.name)) found.push(path)
  }
  return found
}

/**
 * The parts of every identifier of a line, lower-case: `flavourType` and
 * `flavour_type` are flavour + type, `rateOkxUrl` rate + okx + url.
 */
export function identifierSegments(line: string): string[] {
  return (line.match(/[A-Za-z0-9_]+/g) ?? []).flatMap((identifier) =>
    identifier
      .split('_')
      .flatMap((part) => part.match(/[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])/g) ?? [])
      .map((segment) => segment.toLowerCase())
  )
}

/** Every place in the core that names a plugin: `file:line: text`. */
export function pluginNamesInCore(): string[] {
  const plugins = bundledPlugins()
  const words = [...plugins.filter((name) => !ORDINARY_WORDS.has(name)), ...PLUGIN_WORDS]
  const wordPattern = new RegExp(`(?<![\\w])(${words.join('|')})(?![\\w])`, 'i')
  const ordinary = plugins.filter((name) => ORDINARY_WORDS.has(name))
  const referencePattern = new RegExp(
    `plugins[/.](${ordinary.join('|')})\\b|\\b(${ordinary.join('|')})::`
  )
  const segmentWords = new Set(words.map((word) => word.toLowerCase()))
  const found: string[] = []
  for (const root of ['app', 'start', 'resources/views']) {
    for (const file of filesUnder(app.makePath(root))) {
      const lines = readFileSync(file, 'utf8').split('\n')
      lines.forEach((line, index) => {
        const inIdentifier = identifierSegments(line).some((segment) => segmentWords.has(segment))
        if (wordPattern.test(line) || referencePattern.test(line) || inIdentifier) {
          found.push(`${relative(app.makePath(), file)}:${index + 1}: ${line.trim()}`)
        }
      })
    }
  }
  return found
}

test.group('The core names no plugin', () => {
  test('no bundled plugin, its services or its networks are named in app/, start/ or resources/views', ({
    assert,
  }) => {
    assert.isAbove(bundledPlugins().length, 10)
    assert.deepEqual(pluginNamesInCore(), [])
  })

  test('the check finds a plugin name where there is one', ({ assert }) => {
    const plugins = bundledPlugins()
    const words = [...plugins.filter((name) => !ORDINARY_WORDS.has(name)), ...PLUGIN_WORDS]
    const wordPattern = new RegExp(`(?<![\\w])(${words.join('|')})(?![\\w])`, 'i')
    assert.isTrue(wordPattern.test("const family = 'tron'"))
    assert.isTrue(wordPattern.test('// an EVM log index'))
    assert.isTrue(wordPattern.test('rate_okx'))
    assert.isFalse(wordPattern.test('// a button, a cotton reel, tonnes'))
    assert.isFalse(wordPattern.test('rate_limited'))
    // Inside identifiers, by their parts.
    assert.includeMembers(identifierSegments('order.compatType, compat_type'), ['compat'])
    assert.includeMembers(identifierSegments('rateOkxP2pUrl'), ['okx'])
    assert.notInclude(identifierSegments('buttonLabel, cottonType'), 'ton')
  })
})
