import { args } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/operator_command'

export default class RateSet extends OperatorCommand {
  static commandName = 'rate:set'
  static description =
    'Set a fixed exchange rate (rate:set USDT CNY 7.25: 1 USDT = 7.25 CNY) or a markup on the live rate (~1.02: 2 % up; +0.3; -0.2)'

  @args.string({ description: 'Token symbol' })
  declare token: string

  @args.string({ description: 'Fiat currency code' })
  declare fiat: string

  @args.string({
    description:
      'Price of one token in the fiat currency, or a markup on the live rate (~1.02, +0.3, -0.2)',
  })
  declare rate: string

  async execute() {
    const { RateAdmin } = await import('#services/operators/rate_admin')
    const rates = await this.app.container.make(RateAdmin)
    const rate = await rates.set(this.token, this.fiat, this.rate)
    if ('live' in rate)
      this.logger.success(
        `${rate.token}/${rate.fiat}: the live rate with the markup ${rate.rate} (rate.sources must price it)`
      )
    else this.logger.success(`1 ${rate.token} = ${rate.rate} ${rate.fiat} (fixed)`)
  }
}
