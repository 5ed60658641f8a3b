import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import app from '@adonisjs/core/services/app'

const cache = new Map<string, string>()

/**
 * The URL of a file under public/ with a digest of its content (so a
 * browser never keeps an old copy after an upgrade): `assetUrl('assets/admin.css')`.
 */
export function assetUrl(file: string): string {
  const known = cache.get(file)
  if (known && app.inProduction) return known
  const digest = createHash('sha256')
    .update(readFileSync(app.publicPath(file)))
    .digest('hex')
    .slice(0, 12)
  const url = `/${file}?v=${digest}`
  cache.set(file, url)
  return url
}
