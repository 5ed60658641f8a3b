import { args, flags } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class AdminPassword extends OperatorCommand {
  static commandName = 'admin:password'
  static description =
    "Set an administrator's password (a random one is printed once unless --password is given)"

  @args.string({ description: 'E-mail address' })
  declare email: string

  @flags.string({ description: 'New password (at least 12 characters); beware of shell history' })
  declare password?: string

  async execute() {
    const { default: users } = await import('#services/operators/admin_users')
    const { user, generatedPassword } = await users.setPassword(this.email, this.password)
    this.logger.success(`Password of ${user.email} changed; its open sessions end`)
    if (generatedPassword !== null) {
      this.logger.log(
        `The new password is shown only this once:\n  email:    ${user.email}\n  password: ${generatedPassword}`
      )
    }
  }
}
