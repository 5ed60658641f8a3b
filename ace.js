/*
|--------------------------------------------------------------------------
| Ace entry point
|--------------------------------------------------------------------------
|
| Ace commands (`node ace setup`, `node ace wallet:add` ...) are TypeScript
| files run just in time by @poppinss/ts-exec.
*/
import '@poppinss/ts-exec'

await import('./bin/console.js')
