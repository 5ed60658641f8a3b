import type { CommandOptions } from '@adonisjs/core/types/ace'
import { BaseCommand } from '@adonisjs/core/ace'

export default class SchedulerRun extends BaseCommand {
  static commandName = 'scheduler:run'
  static description =
    'Run the background jobs (callbacks every second, chain scans, order expiry every 5 s) until stopped'
  static options: CommandOptions = { startApp: true, staysAlive: true }

  async run() {
    const { startJobs, stopJobs } = await import('#jobs/job_worker')
    this.app.terminating(() => stopJobs())
    await startJobs(this.app)
    this.logger.info('scheduler running; stop with Ctrl-C or SIGTERM')
  }
}
