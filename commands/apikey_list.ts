import { OperatorCommand } from '#support/operator_command'

export default class ApiKeyList extends OperatorCommand {
  static commandName = 'apikey:list'
  static description = 'List merchant API keys (secrets masked)'

  async execute() {
    const { default: ApiKey } = await import('#models/api_key')
    const keys = await ApiKey.query().orderBy('id')
    this.printTable(
      ['pid', 'status', 'secret', 'allowed IPs', 'last used', 'note'],
      keys.map((key) => [
        key.pid,
        key.status,
        `${key.secretKey.slice(0, 4)}…${key.secretKey.slice(-4)}`,
        key.ipAllowlist || 'any',
        key.lastUsedAt ? new Date(key.lastUsedAt).toISOString() : 'never',
        key.note,
      ])
    )
  }
}
