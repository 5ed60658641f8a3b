import app from '@adonisjs/core/services/app'
import type { BaseCommand } from '@adonisjs/core/ace'

/**
 * Runs an ace command in the test process (same database, same
 * container), its output captured in raw mode: what the operator would
 * read, and the exit code the shell would see.
 */
export async function runCommand(command: typeof BaseCommand, argv: string[]) {
  const ace = await app.container.make('ace')
  ace.ui.switchMode('raw')
  const instance = await ace.create(command, argv)
  await instance.exec()
  const output = instance.logger
    .getLogs()
    .map((log) => log.message)
    .join('\n')
  return { exitCode: instance.exitCode ?? 0, output }
}
