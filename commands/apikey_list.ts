import { OperatorCommand } from '#support/operator_command'
import { maskSecret } from '#support/redaction'

export default class ApiKeyList extends OperatorCommand {
  static commandName = 'apikey:list'
  static description = 'List merchant API keys (secrets masked)'

  async execute() {
    const { ApiKeyAdmin } = await import('#services/operators/api_key_admin')
    const keys = await (await this.app.container.make(ApiKeyAdmin)).list()
    this.printTable(
      ['pid', 'status', 'secret', 'allowed IPs', 'last used', 'note'],
      keys.map((key) => [
        key.pid,
        key.status,
        this.#hint(key),
        key.ipAllowlist || 'any',
        key.lastUsedAt ? new Date(key.lastUsedAt).toISOString() : 'never',
        key.note,
      ])
    )
  }

  /** The secret's last characters, enough to tell two apart; "unreadable" under another APP_KEY. */
  #hint(key: { signingSecret(): string }) {
    try {
      return maskSecret(key.signingSecret())
    } catch {
      return 'unreadable (APP_KEY?)'
    }
  }
}
