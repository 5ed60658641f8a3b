import { BaseCommand } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

export default class Setup extends BaseCommand {
  static commandName = 'setup'
  static description = 'Migrate the database and install the defaults (idempotent)'
  static options: CommandOptions = { startApp: true }

  async run() {
    const { default: installation } = await import('#services/installation_service')
    const migrated = await installation.migrate()
    this.logger.info(
      migrated.length ? `Migrated: ${migrated.join(', ')}` : 'Database schema is up to date'
    )
    await installation.installDefaults((line) => this.logger.log(line))
    this.logger.success('Installation is ready')
  }
}
