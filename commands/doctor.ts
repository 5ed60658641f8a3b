import { flags } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'
import type { CheckResult } from '#services/doctor/doctor_check'

const LABELS = { ok: 'ok     ', warning: 'warning', problem: 'problem' } as const

export default class Doctor extends OperatorCommand {
  static commandName = 'doctor'
  static description =
    'Check the installation for what is wrong or risky (APP_URL, APP_KEY, 2FA, chains, RPC endpoints, rates, callbacks, clock, migrations, SQLite); exits 1 on a problem'

  @flags.boolean({ description: 'Print the report as JSON (for monitoring)' })
  declare json?: boolean

  @flags.boolean({ description: 'Exit 1 on warnings too' })
  declare strict?: boolean

  async execute() {
    const { default: doctor, worstFirst } = await import('#services/doctor/doctor')
    const report = await doctor.run()
    const failing =
      report.status === 'problem' || (this.strict === true && report.status === 'warning')
    this.exitCode = failing ? 1 : 0

    if (this.json) {
      this.logger.log(
        JSON.stringify(
          {
            status: report.status,
            generated_at: new Date(report.generatedAt).toISOString(),
            counts: report.counts,
            checks: report.results.map((line) => ({
              check: line.check,
              title: line.title,
              subject: line.subject,
              status: line.status,
              finding: line.finding,
              fix: line.fix,
            })),
          },
          null,
          2
        )
      )
      return
    }

    for (const line of worstFirst(report.results)) this.#print(line)
    const { ok, warning, problem } = report.counts
    const summary = `${problem} problem${problem === 1 ? '' : 's'}, ${warning} warning${warning === 1 ? '' : 's'}, ${ok} ok`
    if (problem > 0) this.logger.error(`${summary}: fix the problems above.`)
    else if (warning > 0)
      this.logger.warning(`${summary}: nothing is broken; the warnings are risks worth fixing.`)
    else this.logger.success(`${summary}: nothing to fix.`)
  }

  #print(line: CheckResult) {
    const label = LABELS[line.status]
    const tag = `[${label}]`
    const coloured =
      line.status === 'problem'
        ? this.colors.red(tag)
        : line.status === 'warning'
          ? this.colors.yellow(tag)
          : this.colors.green(tag)
    this.logger.log(`${coloured} ${line.title}: ${line.finding}`)
    if (line.fix) this.logger.log(`          fix: ${line.fix}`)
  }
}
