import { flags } from '@adonisjs/core/ace'
import { OperatorCommand, OperatorError } from '#support/cli/operator_command'

export default class RateSources extends OperatorCommand {
  static commandName = 'rate:sources'
  static description =
    'List the live rate sources, or choose them: --enable=okx_p2p,coingecko --disable=kraken --order=okx_p2p,coinbase'

  @flags.array({ description: 'Sources to use (added at the end of the order)' })
  declare enable?: string[]

  @flags.array({ description: 'Sources to stop using' })
  declare disable?: string[]

  @flags.array({ description: 'The whole list of sources used, in this order' })
  declare order?: string[]

  async execute() {
    const { default: settings } = await import('#settings/settings_service')
    const { default: rateSources } = await import('#rates/rate_source_registry')
    const known = rateSources.all()
    const names = (list: string[] | undefined) =>
      (list ?? [])
        .flatMap((item) => item.split(','))
        .map((item) => item.trim())
        .filter(Boolean)
    const asked = [...names(this.enable), ...names(this.disable), ...names(this.order)]
    const unknown = asked.filter((name) => !rateSources.get(name))
    if (unknown.length > 0)
      throw new OperatorError(
        `Unknown rate source(s): ${unknown.join(', ')} (known: ${known.map((source) => source.name).join(', ') || 'none: their plugins are off'})`
      )
    let chosen = [...(await settings.get('rate.sources'))]
    if (this.order) chosen = names(this.order)
    for (const name of names(this.enable)) if (!chosen.includes(name)) chosen.push(name)
    chosen = chosen.filter((name) => !names(this.disable).includes(name))
    if (asked.length > 0) {
      await settings.set('rate.sources', chosen.join(','))
      this.logger.success(`rate.sources = ${chosen.join(',') || '(none: fixed rates only)'}`)
    }
    const urls = new Map<string, string>()
    for (const source of known) {
      const configured = await settings.read(`rate.${source.name}.url`).catch(() => '')
      urls.set(source.name, String(configured || source.defaultUrl || '(set rate.<name>.url)'))
    }
    this.printTable(
      ['source', 'kind', 'used', 'order', 'base URL', 'description'],
      known.map((source) => {
        const position = chosen.indexOf(source.name)
        return [
          source.name,
          source.kind === 'fiat_cross' ? 'fiat cross' : 'market',
          position >= 0 ? 'yes' : 'no',
          position >= 0 ? String(position + 1) : '-',
          urls.get(source.name)!,
          source.description,
        ]
      })
    )
  }
}
