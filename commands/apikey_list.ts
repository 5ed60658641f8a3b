import { OperatorCommand } from '#support/cli/operator_command'

export default class ApiKeyList extends OperatorCommand {
  static commandName = 'apikey:list'
  static description = 'List merchant API keys with their use (secrets masked)'

  async execute() {
    const { default: admin } = await import('#services/operators/api_key_admin')
    const keys = await admin.overview()
    this.printTable(
      ['pid', 'status', 'secret', 'allowed IPs', 'last used', 'orders', 'paid', 'note'],
      keys.map((key) => [
        key.pid,
        key.enabled ? 'active' : 'disabled',
        key.secretHint,
        key.allowedIps.join(',') || 'any',
        key.lastUsedAt ? new Date(key.lastUsedAt).toISOString() : 'never',
        String(key.ordersCreated),
        String(key.ordersPaid),
        key.note,
      ])
    )
  }
}
