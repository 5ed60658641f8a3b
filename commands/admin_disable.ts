import { args } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class AdminDisable extends OperatorCommand {
  static commandName = 'admin:disable'
  static description =
    "Disable an administrator's account: no sign-in, its sessions end (never the last enabled admin)"

  @args.string({ description: 'E-mail address' })
  declare email: string

  async execute() {
    const { default: users } = await import('#services/operators/admin_users')
    const { user, changed } = await users.disable(this.email)
    if (changed)
      this.logger.success(`${user.email} is disabled: it cannot sign in, its sessions end`)
    else this.logger.info(`${user.email} was already disabled: nothing changed`)
  }
}
