import { OperatorCommand } from '#support/cli/operator_command'

export default class RateList extends OperatorCommand {
  static commandName = 'rate:list'
  static description =
    'List the exchange rates: fixed ones, and each live pair with its rate, markup, sources (used, dropped, stale, failed) and their last answers'

  async execute() {
    const { default: db } = await import('@adonisjs/lucid/services/db')
    const { default: admin } = await import('#services/operators/rate_admin')
    const fixed = await admin.list()
    if (fixed.length > 0) {
      this.logger.info('Fixed rates')
      this.printTable(
        ['token', 'fiat', 'rate', 'updated'],
        fixed.map((rate) => [
          rate.token,
          rate.fiat,
          rate.rate,
          new Date(rate.updatedAt).toISOString(),
        ])
      )
    }
    const [current, markups, answers] = await Promise.all([
      db.from('rate_current').orderBy('token').orderBy('fiat'),
      db.from('rate_markups'),
      db.from('rate_answers').orderBy('source'),
    ])
    if (current.length === 0) {
      this.logger.info(
        fixed.length === 0
          ? 'No rate yet: set a fixed one (rate:set USDT CNY 7.25) or enable live sources (rate:sources)'
          : 'No live rate (rate.sources is empty, or the workers have not refreshed yet)'
      )
      return
    }
    const markupOf = new Map(
      markups
        .filter((row) => Number(row.api_key_id) === 0)
        .map((row) => [`${row.token}|${row.fiat}`, row.markup])
    )
    const now = Date.now()
    this.logger.info('Live rates (the workers’ last refresh)')
    this.printTable(
      ['token', 'fiat', 'rate', 'markup', 'state', 'used', 'dropped', 'stale / failed', 'computed'],
      current.map((row) => {
        const sources = JSON.parse(row.sources || '{}')
        return [
          row.token,
          row.fiat,
          row.rate ?? '-',
          markupOf.get(`${row.token}|${row.fiat}`) ?? '-',
          row.ok ? 'ok' : `refused: ${row.reason}`,
          (sources.used ?? []).join(', ') || '-',
          (sources.dropped ?? [])
            .map(
              (entry: { source: string; price: string; deviation_percent: string }) =>
                `${entry.source} ${entry.price} (${entry.deviation_percent} %)`
            )
            .join(', ') || '-',
          [...(sources.stale ?? []), ...(sources.failed ?? [])].join(', ') || '-',
          `${Math.round((now - Number(row.computed_at)) / 1000)} s ago`,
        ]
      })
    )
    const perKey = markups.filter((row) => Number(row.api_key_id) !== 0)
    if (perKey.length > 0) {
      const keys = await db
        .from('api_keys')
        .whereIn(
          'id',
          perKey.map((row) => row.api_key_id)
        )
        .select('id', 'pid')
      const pidOf = new Map(keys.map((key) => [Number(key.id), key.pid]))
      this.logger.info(
        "Markups of single API keys (they win over the pair's for that key's orders)"
      )
      this.printTable(
        ['token', 'fiat', 'api key (pid)', 'markup'],
        perKey
          .map((row) => [row.token, row.fiat, pidOf.get(Number(row.api_key_id)) ?? '?', row.markup])
          .sort((a, b) => a.join('|').localeCompare(b.join('|')))
      )
    }
    this.logger.info('Last answer of each source')
    this.printTable(
      ['source', 'token', 'fiat', 'price', 'quoted in', 'age', 'last error'],
      answers.map((row) => [
        row.source,
        row.token,
        row.fiat,
        row.price ?? '-',
        row.quote || '-',
        `${Math.round((now - Number(row.fetched_at)) / 1000)} s`,
        String(row.error || '-').slice(0, 100),
      ])
    )
  }
}
