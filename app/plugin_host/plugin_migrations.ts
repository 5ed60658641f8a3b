import { existsSync, readdirSync } from 'node:fs'
import { dirname, isAbsolute, join, relative } from 'node:path'

/**
 * The migration folders of the plugins (config/database.ts reads them, as
 * early as the configuration: before any plugin is loaded, so by path):
 * every bundled plugin's `plugins/<name>/migrations`, and each
 * PLUGIN_MODULES path's `migrations` beside its module. Applied whether the
 * plugin is on or off (PLUGINS): turning one off never drops or orphans a
 * table, and turning it on again finds its schema ready. Run after the
 * core's, in folder order; a plugin's migration may use the core's tables.
 */
export function pluginMigrationPaths(root: string, pluginModules = ''): string[] {
  const paths: string[] = []
  const bundled = join(root, 'plugins')
  if (existsSync(bundled)) {
    for (const entry of readdirSync(bundled, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name)
    )) {
      if (entry.isDirectory() && existsSync(join(bundled, entry.name, 'migrations')))
        paths.push(`plugins/${entry.name}/migrations`)
    }
  }
  for (const module of pluginModules.split(',').map((item) => item.trim())) {
    // A path (./x/plugin.ts or /abs/plugin.js); an npm package's folder is its own business.
    if (!module || !(module.startsWith('.') || isAbsolute(module))) continue
    const folder = join(dirname(isAbsolute(module) ? module : join(root, module)), 'migrations')
    if (existsSync(folder)) paths.push(relative(root, folder).replaceAll('\\', '/'))
  }
  return paths
}
