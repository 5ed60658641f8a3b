import { readFile } from 'node:fs/promises'
import { args, flags } from '@adonisjs/core/ace'
import { OperatorCommand, OperatorError } from '#support/cli/operator_command'

export default class WalletImport extends OperatorCommand {
  static commandName = 'wallet:import'
  static description =
    'Add the receiving addresses of a file: one per line, "address" or "network address"'

  @args.string({ description: 'File to read ("-" for standard input)' })
  declare file: string

  @flags.string({ description: 'Network of the lines that name none' })
  declare network?: string

  async execute() {
    const text = this.file === '-' ? await this.#stdin() : await this.#read(this.file)
    const { default: wallets } = await import('#services/operators/wallet_admin')
    const report = await wallets.importBatch(text, { defaultNetwork: this.network })
    this.printTable(
      ['line', 'network', 'address', 'result'],
      report.lines.map((line) => [
        line.line,
        line.network ?? '',
        line.address ?? line.given ?? line.text,
        line.outcome === 'added' ? 'added' : `${line.outcome}: ${line.reason}`,
      ])
    )
    const summary = `${report.added} added, ${report.present} already present, ${report.invalid} invalid`
    if (report.invalid > 0) {
      this.logger.error(summary)
      this.exitCode = 1
    } else {
      this.logger.success(summary)
    }
  }

  async #read(path: string) {
    try {
      return await readFile(path, 'utf8')
    } catch (error) {
      throw new OperatorError(`Cannot read ${path}: ${(error as Error).message}`)
    }
  }

  async #stdin() {
    const chunks: Buffer[] = []
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks).toString('utf8')
  }
}
