import { OperatorCommand } from '#support/cli/operator_command'

export default class RateRefreshCommand extends OperatorCommand {
  static commandName = 'rate:refresh'
  static description =
    'Ask the live rate sources now (what the workers do every rate.refresh_seconds) and print each pair'

  async execute() {
    const { default: settings } = await import('#settings/settings_service')
    const { default: rateRefresh } = await import('#rates/rate_refresh')
    const { default: db } = await import('@adonisjs/lucid/services/db')
    const sources = await rateRefresh.sources()
    if (sources.length === 0) {
      const named = await settings.get('rate.sources')
      this.logger.info(
        named.length === 0
          ? 'No live source is used (rate.sources is empty): node ace rate:sources --enable=<name>'
          : `None of rate.sources (${named.join(', ')}) is loaded: their plugins are off`
      )
      return
    }
    await rateRefresh.refresh()
    const rows = await db.from('rate_current').orderBy('token').orderBy('fiat')
    this.printTable(
      ['token', 'fiat', 'rate', 'state'],
      rows.map((row) => [
        row.token,
        row.fiat,
        row.rate ?? '-',
        row.ok ? 'ok' : `refused: ${row.reason}`,
      ])
    )
    if (rows.some((row) => !row.ok)) this.exitCode = 1
  }
}
