import { args, flags } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class AdminCreate extends OperatorCommand {
  static commandName = 'admin:create'
  static description =
    'Create a console administrator (a random password is printed once unless --password is given)'

  @args.string({ description: 'E-mail address (matched case-insensitively)' })
  declare email: string

  @flags.string({ description: 'admin (everything) or viewer (read only)', default: 'admin' })
  declare role: string

  @flags.string({ description: 'Password (at least 12 characters); beware of shell history' })
  declare password?: string

  async execute() {
    const { default: users } = await import('#services/operators/admin_users')
    const { user, generatedPassword } = await users.create({
      email: this.email,
      role: this.role,
      password: this.password,
    })
    this.logger.success(`Created ${user.role} ${user.email}`)
    if (generatedPassword !== null) {
      this.logger.log(
        `Its password is shown only this once:\n  email:    ${user.email}\n  password: ${generatedPassword}`
      )
    }
  }
}
