import { flags } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class ApiKeyCreate extends OperatorCommand {
  static commandName = 'apikey:create'
  static description = 'Create a merchant API key (prints its secret once)'

  @flags.string({ description: 'PID of the key (default: next free number above 1000)' })
  declare pid?: string

  @flags.string({ description: 'Secret key (default: 64 random hex characters)' })
  declare secret?: string

  @flags.array({ description: 'Allowed client IP or CIDR range (repeatable; default: any)' })
  declare ip?: string[]

  @flags.string({ description: 'Free-text note' })
  declare note?: string

  async execute() {
    const { default: apiKeys } = await import('#services/operators/api_key_admin')
    const apiKey = await apiKeys.create({
      pid: this.pid,
      secret: this.secret,
      ips: this.ip,
      note: this.note,
    })
    this.logger.success(`Created API key ${apiKey.pid}`)
    this.logger.log(`pid:        ${apiKey.pid}`)
    this.logger.log(`secret_key: ${apiKey.signingSecret()}`)
    if (!this.secret) this.logger.log('Store the secret now: it is shown only once.')
  }
}
