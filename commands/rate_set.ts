import { args } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/operator_command'

export default class RateSet extends OperatorCommand {
  static commandName = 'rate:set'
  static description =
    'Set a fixed exchange rate: 1 TOKEN = RATE FIAT (e.g. rate:set USDT CNY 7.25)'

  @args.string({ description: 'Token symbol' })
  declare token: string

  @args.string({ description: 'Fiat currency code' })
  declare fiat: string

  @args.string({ description: 'Price of one token in the fiat currency' })
  declare rate: string

  async execute() {
    const { RateAdmin } = await import('#services/operators/rate_admin')
    const rates = await this.app.container.make(RateAdmin)
    const rate = await rates.set(this.token, this.fiat, this.rate)
    this.logger.success(`1 ${rate.token} = ${rate.rate} ${rate.fiat} (fixed)`)
  }
}
