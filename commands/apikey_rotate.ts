import { args, flags } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class ApiKeyRotate extends OperatorCommand {
  static commandName = 'apikey:rotate'
  static description = 'Replace the secret of an API key (prints the new secret once)'

  @args.string({ description: 'PID of the key' })
  declare pid: string

  @flags.string({ description: 'New secret (default: 64 random hex characters)' })
  declare secret?: string

  async execute() {
    const { default: apiKeys } = await import('#services/operators/api_key_admin')
    const apiKey = await apiKeys.rotate(this.pid, this.secret)
    this.logger.success(`Rotated the secret of API key ${apiKey.pid}; the old one no longer signs`)
    this.logger.log(`secret_key: ${apiKey.signingSecret()}`)
  }
}
