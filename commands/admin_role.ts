import { args } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class AdminRole extends OperatorCommand {
  static commandName = 'admin:role'
  static description = "Change an administrator's role: admin (everything) or viewer (read only)"

  @args.string({ description: 'E-mail address' })
  declare email: string

  @args.string({ description: 'admin or viewer' })
  declare role: string

  async execute() {
    const { default: users } = await import('#services/operators/admin_users')
    const user = await users.setRole(this.email, this.role)
    this.logger.success(`${user.email} is now ${user.role}`)
  }
}
