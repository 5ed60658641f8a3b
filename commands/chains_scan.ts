import { flags } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/operator_command'

export default class ChainsScan extends OperatorCommand {
  static commandName = 'chains:scan'
  static description = 'Scan the enabled chains for incoming payments now'

  @flags.string({ description: 'Only this network' })
  declare network?: string

  async execute() {
    const { default: chainScanner } = await import('#services/chain_scanner')
    const reports = await chainScanner.scan({ network: this.network })
    if (reports.length === 0) this.logger.info('No enabled chain to scan')
    for (const report of reports) {
      const line = `${report.network}: ${report.detail}`
      if (report.detail.startsWith('scan failed')) {
        this.logger.error(line)
        this.exitCode = 1
      } else this.logger.info(line)
    }
  }
}
