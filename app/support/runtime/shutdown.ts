/**
 * Whether this process is shutting down (a SIGTERM or SIGINT was
 * received): /health/ready answers 503 from then on, so that a load
 * balancer still probing sends no new work while in-flight requests
 * finish. Set by bin/server.ts, read by the health controller.
 */
let shuttingDown = false

export function beginShutdown() {
  shuttingDown = true
}

export function isShuttingDown(): boolean {
  return shuttingDown
}

/** Tests only: back to serving. */
export function resetShutdownState() {
  shuttingDown = false
}
