import { args } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class AdminEnable extends OperatorCommand {
  static commandName = 'admin:enable'
  static description = 'Enable a disabled administrator account again'

  @args.string({ description: 'E-mail address' })
  declare email: string

  async execute() {
    const { default: users } = await import('#services/operators/admin_users')
    const { user, changed } = await users.enable(this.email)
    if (changed) this.logger.success(`${user.email} is enabled: it can sign in again`)
    else this.logger.info(`${user.email} was not disabled: nothing changed`)
  }
}
