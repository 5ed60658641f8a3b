import { BaseCommand } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { InvalidAddressError } from '#chains/chain_family'
import { SettingValueError } from '#settings/setting_types'

import { OperatorError } from '#support/cli/operator_error'
import { aceActor, actingAs } from '#services/audit/audit_context'

export { OperatorError }

/**
 * Base of the operators' ace commands: the app is started (database
 * ready), and a refusal prints one clear line and exits non-zero. Every
 * change it makes is audited as made by `ace:<os user>`.
 */
export abstract class OperatorCommand extends BaseCommand {
  static options: CommandOptions = { startApp: true }

  abstract execute(): Promise<void>

  async run() {
    try {
      await actingAs({ actor: aceActor() }, () => this.execute())
    } catch (error) {
      if (
        error instanceof OperatorError ||
        error instanceof InvalidAddressError ||
        error instanceof SettingValueError
      ) {
        this.logger.error(error.message)
        this.exitCode = 1
        return
      }
      throw error
    }
  }

  /** Prints rows as an aligned table. */
  protected printTable(head: string[], rows: (string | number)[][]) {
    const table = this.ui.table()
    table.head(head)
    for (const row of rows) table.row(row.map(String))
    table.render()
  }
}
