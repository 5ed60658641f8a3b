import { OperatorCommand } from '#support/operator_command'

export default class RateList extends OperatorCommand {
  static commandName = 'rate:list'
  static description = 'List fixed exchange rates'

  async execute() {
    const { RateAdmin } = await import('#services/operators/rate_admin')
    const admin = await this.app.container.make(RateAdmin)
    const rates = await admin.list()
    this.printTable(
      ['token', 'fiat', 'rate', 'updated'],
      rates.map((rate) => [
        rate.token,
        rate.fiat,
        rate.rate,
        new Date(rate.updatedAt).toISOString(),
      ])
    )
  }
}
