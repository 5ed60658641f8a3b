import { flags } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'
import type { ScanReport } from '#services/chain_scanner'

/** Runs one catch-up takes at most (each covers chains.max_blocks_per_scan blocks). */
const MAX_RUNS = 10_000

export default class ChainsScan extends OperatorCommand {
  static commandName = 'chains:scan'
  static description =
    'Scan the enabled chains for incoming payments now (a chain behind is scanned until caught up)'

  @flags.string({ description: 'Only this network' })
  declare network?: string

  @flags.boolean({ description: 'One scan run per chain, even when it is left behind' })
  declare once?: boolean

  async execute() {
    const { default: chainScanner } = await import('#services/chain_scanner')
    const { default: Chain } = await import('#models/chain')
    const { Progress } = await import('#support/cli/progress')
    const reports = await chainScanner.scan({ network: this.network })
    if (reports.length === 0) this.logger.info('No enabled chain to scan')
    for (let report of reports) {
      let summary = ''
      // A long catch-up: run after run (each bounded) until caught up, with a progress line.
      if (!this.once && this.#behind(report)) {
        const chain = await Chain.findByOrFail('network', report.network)
        const progress = new Progress(`${report.network} catching up`, { rateOf: 'blocks' })
        const firstScanned = BigInt(report.heights?.scanned ?? report.heights?.head ?? '0')
        const total = {
          runs: 1,
          transfers: report.transfers,
          paid: report.paid,
          unmatched: report.unmatched,
        }
        const counts = (last: ScanReport) => {
          const head = last.heights?.head
          const scanned = last.heights?.scanned
          return {
            blocks: scanned ? Number(BigInt(scanned) - firstScanned) : 0,
            behind: head && scanned ? Math.max(0, Number(BigInt(head) - BigInt(scanned))) : 0,
            ...total,
          }
        }
        progress.update(counts(report), true)
        while (this.#behind(report) && total.runs < MAX_RUNS) {
          report = await chainScanner.scanNetwork(chain)
          total.runs++
          total.transfers += report.transfers
          total.paid += report.paid
          total.unmatched += report.unmatched
          progress.update(counts(report))
        }
        progress.done(counts(report))
        summary =
          `${total.runs} runs, ${total.transfers} transfer(s), ${total.paid} paid, ${total.unmatched} unmatched in all; ` +
          'last run: '
      }
      const line = `${report.network}: ${summary}${report.detail}`
      if (report.detail.startsWith('scan failed')) {
        this.logger.error(line)
        this.exitCode = 1
      } else this.logger.info(line)
    }
  }

  /** Left behind by a bounded run (not interrupted, not failed): more to scan at once. */
  #behind(report: ScanReport) {
    return report.scanned && !report.caughtUp && !report.interrupted
  }
}
