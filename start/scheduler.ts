/*
|--------------------------------------------------------------------------
| Background job schedule
|--------------------------------------------------------------------------
|
| Run by `npm start` (RUN_JOBS, default true) or `node ace scheduler:run`.
| Several processes may run it against one database: the jobs claim rows.
| Merchant callbacks are sent by their own loop, started with these jobs
| (app/callbacks/delivery_loop.ts), not on a schedule.
*/
import scheduler from 'adonisjs-scheduler/services/main'
import { scheduledJobs } from '#jobs/scheduled_jobs'
import jobRunner from '#jobs/job_runner'
import pluginRegistry from '#plugin_host/plugin_registry'

// Chain watches: configuration changes seen within a second; scans on new heads or at the poll interval.
scheduler.call(scheduledJobs.scanChains).everySecond()
scheduler.call(scheduledJobs.expireOrders).everyFiveSeconds()
scheduler.call(scheduledJobs.reconcileProviderPayments).everyFiveSeconds()
scheduler.call(scheduledJobs.watchNotifications).everyMinute()
scheduler.call(scheduledJobs.refreshRates).everyFiveSeconds()

// The enabled plugins' jobs, each under the job runner like the core's.
for (const job of pluginRegistry.jobs()) {
  const seconds = Math.min(59, Math.max(1, Math.round(job.everySeconds))) as Parameters<
    ReturnType<typeof scheduler.call>['everySeconds']
  >[0]
  scheduler.call(() => jobRunner.run(job.name, () => job.run())).everySeconds(seconds)
}
