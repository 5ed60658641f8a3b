import { test } from '@japa/runner'
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import app from '@adonisjs/core/services/app'
import router from '@adonisjs/core/services/router'
import env from '#start/env'
import { SETTINGS } from '#settings/definitions'
import pluginRegistry from '#plugin_host/plugin_registry'

/**
 * The manual (README.md and docs/*.md) names everything an operator or a
 * merchant can use: every env variable of start/env.ts, every setting (the
 * core's and every plugin's, on or off), every ace command of commands/ and of
 * the plugins, every HTTP path the app registers, and its relative links lead
 * to existing files and headings.
 *
 * A name counts as documented when it appears in code (`…` or a fenced block).
 * Routes: `:param` and `{param}` are the same. Left out: the console's own
 * pages under ADMIN_PATH (docs/console.md describes them page by page, by
 * name; their URLs are the console's business and move with ADMIN_PATH) and
 * the benchmark baselines under /__bench (registered only with BENCH_ROUTES).
 */

const ROOT = app.makePath()

function manualFiles(): string[] {
  const docs = join(ROOT, 'docs')
  const pages = existsSync(docs)
    ? readdirSync(docs)
        .filter((name) => name.endsWith('.md'))
        .sort()
        .map((name) => join(docs, name))
    : []
  return [join(ROOT, 'README.md'), ...pages]
}

/** Inline code spans (one a line) and fenced blocks of a Markdown text. */
function codeOf(markdown: string): string {
  const parts: string[] = []
  const fence = /^(```|~~~)[^\n]*\n([\s\S]*?)^\1[ \t]*$/gm
  for (const match of markdown.matchAll(fence)) parts.push(match[2])
  const prose = markdown.replace(fence, '\n')
  for (const match of prose.matchAll(/(`+)([\s\S]*?[^`])\1(?!`)/g))
    parts.push(match[2].replace(/\s+/g, ' ').trim())
  return parts.join('\n')
}

/** Markdown without its fenced blocks and code spans (links are read there). */
function proseOf(markdown: string): string {
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '\n')
    .replace(/(`+)[\s\S]*?[^`]\1(?!`)/g, '')
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')

function mentions(code: string, name: string): boolean {
  return new RegExp(`(?<![\\w:.-])${escape(name)}(?![\\w:-])`).test(code)
}

/** A command is documented as a command: a code span or code line that starts with it, or `ace NAME`. */
function commandMentioned(code: string, name: string): boolean {
  const command = `${escape(name)}(?![\\w:/.-])`
  return new RegExp(`(?:^[ \\t]*(?:node )?(?:ace )?|\\bace )${command}`, 'm').test(code)
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '\n')
  for (const match of withoutFences.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = slug(match[1])
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  for (const match of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1])
  return anchors
}

function envNames(): string[] {
  const source = readFileSync(join(ROOT, 'start/env.ts'), 'utf8')
  const block = source.slice(
    source.indexOf('Env.create('),
    source.indexOf('\n})', source.indexOf('Env.create('))
  )
  return [...block.matchAll(/^\s{2}([A-Z][A-Z0-9_]*):/gm)].map((match) => match[1])
}

function commandNames(): string[] {
  const dir = join(ROOT, 'commands')
  const names = readdirSync(dir)
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) => {
      const match = readFileSync(join(dir, file), 'utf8').match(
        /static\s+commandName\s*=\s*['"]([^'"]+)['"]/
      )
      return match ? [match[1]] : []
    })
  const fromPlugins = pluginRegistry.all.flatMap((plugin) =>
    (plugin.commands ?? []).map((command: { commandName: string }) => command.commandName)
  )
  return [...new Set([...names, ...fromPlugins])]
}

function settingKeys(): string[] {
  const fromPlugins = pluginRegistry.all.flatMap((plugin) => Object.keys(plugin.settings ?? {}))
  return [...new Set([...Object.keys(SETTINGS), ...fromPlugins])]
}

/** Every path the router holds, as a pattern whose params accept `:name` or `{name}`. */
function routePatterns(): string[] {
  const adminPath = env.get('ADMIN_PATH')
  const patterns = new Set<string>()
  for (const route of Object.values(router.toJSON()).flat()) {
    const pattern = route.pattern
    if (pattern === adminPath || pattern.startsWith(`${adminPath}/`)) continue
    if (pattern.startsWith('/__bench')) continue
    patterns.add(pattern)
  }
  return [...patterns].sort()
}

function routeDocumented(code: string, pattern: string): boolean {
  const source = pattern
    .split(/(:[A-Za-z0-9_]+\??)/)
    .map((part, index) => (index % 2 === 1 ? '(?::\\w+|\\{\\w+\\})' : escape(part)))
    .join('')
  return new RegExp(`(?<![\\w/.-])${source}(?![\\w/-])`).test(code)
}

function missing(names: string[], code: string, isDocumented = mentions) {
  return names.filter((name) => !isDocumented(code, name))
}

/** The failure names what is missing, in full. */
const listed = (what: string, names: string[]) => `${what} (${names.length}): ${names.join(', ')}`

test.group('The manual', () => {
  const files = manualFiles()
  const texts = new Map(files.map((file) => [file, readFileSync(file, 'utf8')]))
  const code = [...texts.values()].map(codeOf).join('\n')

  test('names every env variable of start/env.ts', ({ assert }) => {
    const names = envNames()
    assert.isAbove(names.length, 20)
    const absent = missing(names, code)
    assert.deepEqual(
      absent,
      [],
      listed('env variables of start/env.ts that no page of the manual names in code', absent)
    )
  })

  test('names every setting of the core and of every plugin', ({ assert }) => {
    const keys = settingKeys()
    assert.isAbove(keys.length, 30)
    const absent = missing(keys, code)
    assert.deepEqual(
      absent,
      [],
      listed('settings that no page of the manual names in code', absent)
    )
  })

  test('names every ace command of commands/ and of the plugins', ({ assert }) => {
    const names = commandNames()
    assert.isAbove(names.length, 20)
    const absent = missing(names, code, commandMentioned)
    assert.deepEqual(
      absent,
      [],
      listed('ace commands that no page of the manual names in code', absent)
    )
  })

  test('names every HTTP path the app registers (but the console pages and /__bench)', ({
    assert,
  }) => {
    const patterns = routePatterns()
    assert.isAbove(patterns.length, 10)
    const absent = missing(patterns, code, routeDocumented)
    assert.deepEqual(
      absent,
      [],
      listed('routes that no page of the manual names in code (`:param` or `{param}`)', absent)
    )
  })

  test('relative links lead to existing files and headings; the README links every docs page', ({
    assert,
  }) => {
    const broken: string[] = []
    for (const [file, text] of texts) {
      for (const match of proseOf(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = match[1]
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
        const [path, anchor] = target.split('#', 2)
        const where = path === '' ? file : resolve(dirname(file), decodeURI(path))
        const label = `${relative(ROOT, file)}: ${target}`
        if (!existsSync(where)) {
          broken.push(`${label} (no such file)`)
          continue
        }
        if (anchor === undefined || statSync(where).isDirectory() || !where.endsWith('.md'))
          continue
        const anchors = anchorsOf(texts.get(where) ?? readFileSync(where, 'utf8'))
        if (!anchors.has(decodeURIComponent(anchor)))
          broken.push(`${label} (no heading #${anchor})`)
      }
    }
    assert.deepEqual(broken, [], listed('broken relative links in the manual', broken))

    const readme = proseOf(texts.get(join(ROOT, 'README.md'))!)
    const unlinked = files
      .slice(1)
      .map((file) => relative(ROOT, file))
      .filter((page) => !readme.includes(`](${page})`) && !readme.includes(`](${page}#`))
    assert.deepEqual(unlinked, [], listed('docs pages the README does not link', unlinked))
  })
})
