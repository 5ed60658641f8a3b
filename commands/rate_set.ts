import { args, flags } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'
import { OperatorError } from '#support/cli/operator_error'

export default class RateSet extends OperatorCommand {
  static commandName = 'rate:set'
  static description =
    'Set a fixed exchange rate (rate:set USDT CNY 7.25: 1 USDT = 7.25 CNY) or a markup on the live rate (~1.02: 2 % up; +0.3; -0.2), for every key or one (--key); --clear removes a markup'

  @args.string({ description: 'Token symbol' })
  declare token: string

  @args.string({ description: 'Fiat currency code' })
  declare fiat: string

  @args.string({
    description:
      'Price of one token in the fiat currency, or a markup on the live rate (~1.02, +0.3, -0.2)',
    required: false,
  })
  declare rate?: string

  @flags.string({
    description: "A merchant API key's pid: the markup applies to that key's orders only",
  })
  declare key?: string

  @flags.boolean({ description: 'Remove the markup (the pair’s, or with --key that key’s)' })
  declare clear?: boolean

  async execute() {
    const { default: rates } = await import('#services/operators/rate_admin')
    if (this.clear) {
      if (this.rate !== undefined)
        throw new OperatorError('Give either a rate or markup, or --clear, not both')
      const cleared = await rates.clearMarkup(this.token, this.fiat, this.key ?? null)
      const whose = cleared.apiKeyPid ? ` for API key ${cleared.apiKeyPid}` : ''
      this.logger.success(
        `${cleared.token}/${cleared.fiat}: markup ${cleared.markup}${whose} removed`
      )
      return
    }
    if (this.rate === undefined)
      throw new OperatorError(
        'Give the rate (rate:set USDT CNY 7.25) or a markup (~1.02, +0.3, -0.2), or --clear'
      )
    const rate = await rates.set(this.token, this.fiat, this.rate, { apiKeyPid: this.key ?? null })
    if (!('live' in rate)) {
      this.logger.success(`1 ${rate.token} = ${rate.rate} ${rate.fiat} (fixed)`)
      return
    }
    const whose = rate.apiKeyPid ? ` for API key ${rate.apiKeyPid}'s orders` : ''
    this.logger.success(
      `${rate.token}/${rate.fiat}: the live rate with the markup ${rate.rate}${whose} (rate.sources must price it)`
    )
    if (rate.shadowedByFixed)
      this.logger.warning(
        `${rate.token}/${rate.fiat} has a fixed rate (${rate.shadowedByFixed}), which prices every key's orders: this markup applies once it is removed`
      )
  }
}
