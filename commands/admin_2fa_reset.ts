import { args } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class Admin2faReset extends OperatorCommand {
  static commandName = 'admin:2fa:reset'
  static description =
    "Turn off an administrator's two-factor sign-in (lost authenticator and recovery codes)"

  @args.string({ description: 'E-mail address' })
  declare email: string

  async execute() {
    const { default: users } = await import('#services/operators/admin_users')
    const { user, wasEnabled } = await users.reset2fa(this.email)
    if (wasEnabled)
      this.logger.success(`Two-factor sign-in of ${user.email} turned off; it may enrol again`)
    else this.logger.info(`${user.email} had no two-factor sign-in: nothing changed`)
  }
}
