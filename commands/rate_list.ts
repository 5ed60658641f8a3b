import { OperatorCommand } from '#support/operator_command'

export default class RateList extends OperatorCommand {
  static commandName = 'rate:list'
  static description = 'List fixed exchange rates'

  async execute() {
    const { default: Rate } = await import('#models/rate')
    const rates = await Rate.query().orderBy('token').orderBy('fiat')
    this.printTable(
      ['token', 'fiat', 'rate', 'updated'],
      rates.map((rate) => [rate.token, rate.fiat, rate.rate, new Date(rate.updatedAt).toISOString()])
    )
  }
}
