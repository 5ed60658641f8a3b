import { args, flags } from '@adonisjs/core/ace'
import { OperatorCommand, OperatorError } from '#support/cli/operator_command'

export default class ApiKeySet extends OperatorCommand {
  static commandName = 'apikey:set'
  static description = 'Enable or disable an API key, set its allowed client IPs or its note'

  @args.string({ description: 'PID of the key' })
  declare pid: string

  @flags.boolean({ description: 'Enable the key' })
  declare enable?: boolean

  @flags.boolean({ description: 'Disable the key (its requests get 401)' })
  declare disable?: boolean

  @flags.array({ description: 'Allowed client IP or CIDR range (repeatable; replaces the list)' })
  declare ip?: string[]

  @flags.boolean({ description: 'Allow requests from any IP' })
  declare anyIp?: boolean

  @flags.string({ description: 'Free-text note (an empty value clears it)' })
  declare note?: string

  async execute() {
    if (this.enable && this.disable) throw new OperatorError('Give --enable or --disable, not both')
    if (this.ip && this.anyIp) throw new OperatorError('Give --ip or --any-ip, not both')
    const { default: apiKeys } = await import('#services/operators/api_key_admin')
    const apiKey = await apiKeys.update(this.pid, {
      enabled: this.enable ? true : this.disable ? false : undefined,
      ips: this.anyIp ? [] : this.ip,
      note: this.note,
    })
    const note = apiKey.note ? `, note: ${apiKey.note}` : ''
    this.logger.success(
      `API key ${apiKey.pid}: ${apiKey.status}, allowed IPs: ${apiKey.ipAllowlist || 'any'}${note}`
    )
  }
}
