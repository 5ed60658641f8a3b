import { OperatorCommand } from '#support/cli/operator_command'

function when(epoch: number | null) {
  return epoch === null ? '-' : new Date(epoch).toISOString()
}

export default class AdminList extends OperatorCommand {
  static commandName = 'admin:list'
  static description = 'List the console administrators'

  async execute() {
    const { default: users } = await import('#services/operators/admin_users')
    const rows = await users.list()
    if (rows.length === 0) {
      this.logger.info('No administrator yet: create one with admin:create EMAIL')
      return
    }
    this.printTable(
      ['email', 'role', 'status', '2fa', 'last login', 'password changed'],
      rows.map((user) => [
        user.email,
        user.role,
        user.disabledAt === null ? 'enabled' : 'disabled',
        user.totpEnabledAt === null ? 'off' : 'on',
        when(user.lastLoginAt),
        when(user.passwordChangedAt),
      ])
    )
  }
}
