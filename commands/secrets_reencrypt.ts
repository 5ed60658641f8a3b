import { OperatorCommand, OperatorError } from '#support/cli/operator_command'

export default class SecretsReencrypt extends OperatorCommand {
  static commandName = 'secrets:reencrypt'
  static description =
    'Encrypt the stored secrets with the current APP_KEY (old keys from APP_KEY_PREVIOUS); idempotent, prints counts'

  async execute() {
    const { default: db } = await import('@adonisjs/lucid/services/db')
    const { sealStoredSecrets } = await import('#services/secrets_reencryption')
    const { Progress } = await import('#support/cli/progress')
    // On stderr, at most once a second, and a last line; the counts per column follow on stdout.
    const progress = new Progress('secrets:reencrypt', { rateOf: 'checked' })
    let last = { checked: 0, written: 0 }
    const report = await sealStoredSecrets(db.connection(), {
      reencrypt: true,
      onRow: (seen) => {
        last = { ...seen }
        progress.update(last)
      },
    })
    progress.done(last)
    for (const column of report) {
      this.logger.info(
        `${column.name}: ${column.reencrypted} re-encrypted, ${column.encrypted} encrypted (were plain), ` +
          `${column.current} already current, ${column.unreadable.length} unreadable`
      )
    }
    const unreadable = report.flatMap((column) => column.unreadable)
    if (unreadable.length > 0) {
      throw new OperatorError(
        `No known key decrypts: ${unreadable.join(', ')}. Put the APP_KEY they were written with in ` +
          'APP_KEY_PREVIOUS and run again (or set those secrets anew)'
      )
    }
    this.logger.success('Every stored secret is encrypted with the current APP_KEY')
  }
}
