import { defineConfig } from '@adonisjs/static'

/**
 * Static files under public/ (the cashier's stylesheet and script). Their
 * URLs carry a digest of the content (app/cashier/cashier_assets.ts), so a
 * day of caching never serves an old copy after an upgrade.
 */
const staticServerConfig = defineConfig({
  enabled: true,
  etag: true,
  lastModified: true,
  dotFiles: 'ignore',
  maxAge: '1d',
})

export default staticServerConfig
