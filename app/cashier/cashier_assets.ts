import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import app from '@adonisjs/core/services/app'

/**
 * URLs of the cashier's stylesheet and script (served from public/ by
 * @adonisjs/static), with a digest of their content so that a browser
 * never keeps an old copy after an upgrade.
 */
const FILES = { css: 'assets/cashier.css', js: 'assets/cashier.js' } as const

let cached: Record<keyof typeof FILES, string> | null = null

export function cashierAssets(): Record<keyof typeof FILES, string> {
  if (cached && app.inProduction) return cached
  const urls = {} as Record<keyof typeof FILES, string>
  for (const [name, file] of Object.entries(FILES) as [keyof typeof FILES, string][]) {
    const digest = createHash('sha256')
      .update(readFileSync(app.publicPath(file)))
      .digest('hex')
      .slice(0, 12)
    urls[name] = `/${file}?v=${digest}`
  }
  cached = urls
  return urls
}
