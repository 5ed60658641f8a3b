import { args, flags } from '@adonisjs/core/ace'
import { OperatorCommand, OperatorError } from '#support/cli/operator_command'

export default class TokenSet extends OperatorCommand {
  static commandName = 'token:set'
  static description = 'Add or change a token of a network'

  @args.string({ description: 'Network name' })
  declare network: string

  @args.string({ description: 'Token symbol (USDT, USDC, TRX ...)' })
  declare symbol: string

  @flags.string({ description: 'Contract / mint / jetton master address' })
  declare contract?: string

  @flags.boolean({ description: "The token is the chain's native coin (no contract)" })
  declare native?: boolean

  @flags.number({ description: 'On-chain decimals of the token' })
  declare decimals?: number

  @flags.number({
    description: 'Fraction digits of payable amounts, 2 to 6 (the unique-amount step)',
  })
  declare precision?: number

  @flags.boolean({ description: 'Enable the token' })
  declare enable?: boolean

  @flags.boolean({ description: 'Disable the token' })
  declare disable?: boolean

  async execute() {
    if (this.enable && this.disable) throw new OperatorError('Give --enable or --disable, not both')
    const { default: chains } = await import('#services/operators/chain_admin')
    const token = await chains.setToken(this.network, this.symbol, {
      contract: this.contract,
      native: this.native,
      decimals: this.decimals,
      precision: this.precision,
      enabled: this.enable ? true : this.disable ? false : undefined,
    })
    this.logger.success(
      `${token.symbol} on ${token.network}: ${token.contract ?? 'native coin'}, ${token.decimals} decimals, ` +
        `precision ${token.amountPrecision}, ${token.enabled ? 'enabled' : 'disabled'}`
    )
  }
}
