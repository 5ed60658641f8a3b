// Ace entry point of the bare app (`node ace build`), TypeScript run just in time.
import '@poppinss/ts-exec'

await import('./bin/console.js')
