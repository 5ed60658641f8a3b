/** A PLUGINS / PLUGIN_MODULES value that cannot be honoured: start-up stops with it. */
export class PluginConfigurationError extends Error {}

/**
 * Which of the known plugins are on, from the PLUGINS env: empty keeps
 * all; `a,b` keeps only those; `-a,-b` removes those. Mixing
 * both forms or naming an unknown plugin is refused, so that a typo never
 * silently runs a gateway without (or with) a channel.
 */
export function selectPlugins(known: string[], value: string | undefined): Set<string> {
  const items = (value ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== '')
  if (items.length === 0) return new Set(known)

  const removals = items.filter((item) => item.startsWith('-'))
  if (removals.length > 0 && removals.length < items.length) {
    throw new PluginConfigurationError(
      `PLUGINS mixes kept and removed plugins ("${value}"): list the plugins to keep (a,b) or those to remove (-a,-b), not both`
    )
  }
  const names = items.map((item) => item.replace(/^-/, ''))
  const unknown = names.filter((name) => !known.includes(name))
  if (unknown.length > 0) {
    throw new PluginConfigurationError(
      `PLUGINS names unknown plugin(s): ${unknown.join(', ')}. Known plugins: ${known.join(', ')}`
    )
  }
  if (removals.length > 0) return new Set(known.filter((name) => !names.includes(name)))
  return new Set(names)
}
