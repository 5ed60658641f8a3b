/*
|--------------------------------------------------------------------------
| Background job schedule
|--------------------------------------------------------------------------
|
| Run by `npm start` (RUN_JOBS, default true) or `node ace scheduler:run`.
| Several processes may run it against one database: the jobs claim rows.
*/
import scheduler from 'adonisjs-scheduler/services/main'
import { scheduledJobs } from '#jobs/scheduled_jobs'

scheduler.call(scheduledJobs.deliverCallbacks).everySecond()
scheduler.call(scheduledJobs.scanChains).everySecond()
scheduler.call(scheduledJobs.expireOrders).everyFiveSeconds()
