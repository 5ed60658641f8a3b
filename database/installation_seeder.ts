import { BaseSeeder } from '@adonisjs/lucid/seeders'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'

export type Printer = (line: string) => void

/** Lines for the operator (a secret shown once) go to the terminal, never to the log. */
const toTerminal: Printer = (line) => process.stdout.write(`${line}\n`)

/**
 * Base of the installation seeders (database/seeders). Each inserts what
 * is missing of its defaults and never overwrites a row, so running them
 * again (`setup`, every start, `node ace db:seed`) changes nothing an
 * operator set. `print` tells the operator what was created; `db:seed`,
 * which builds seeders with the client alone, prints to the terminal.
 */
export abstract class InstallationSeeder extends BaseSeeder {
  constructor(
    client: QueryClientContract,
    protected print: Printer = toTerminal
  ) {
    super(client)
  }
}

export type InstallationSeederClass = new (
  client: QueryClientContract,
  print?: Printer
) => InstallationSeeder
