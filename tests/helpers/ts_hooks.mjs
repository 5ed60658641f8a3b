/**
 * The TypeScript loader of the processes the tests start (servers, ace
 * commands): the same SWC transform as @poppinss/ts-exec (what `npm start`
 * and `node ace` use), registered with `module.registerHooks`, which runs in
 * the process's own thread. ts-exec registers its hooks with
 * `module.register`, on a separate loader thread that every one of the
 * ~2,500 module resolutions of a boot crosses twice; here a boot costs about
 * a third less CPU, and the suite starts a few hundred processes.
 *
 * The options follow tsconfig.json (@adonisjs/tsconfig's app preset):
 * target ESNext, ES modules, legacy decorators with their metadata
 * (experimentalDecorators, emitDecoratorMetadata), class names kept,
 * inline source maps (stack traces point into the .ts files). As in
 * ts-exec, a `.js` specifier that names no file is tried as `.ts` (the
 * `#alias/*.js` imports of package.json).
 */
import { registerHooks } from 'node:module'
import { fileURLToPath } from 'node:url'
import { transformSync } from '@swc/core'

process.setSourceMapsEnabled(true)

const OPTIONS = {
  sourceMaps: 'inline',
  module: { type: 'es6' },
  jsc: {
    target: 'esnext',
    externalHelpers: false,
    keepClassNames: true,
    parser: { syntax: 'typescript', tsx: false, decorators: true, dynamicImport: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    experimental: { keepImportAttributes: true },
  },
}

const isTypeScript = (url) =>
  /\.(ts|mts)$/.test(url) && !url.endsWith('.d.ts') && !url.includes('/node_modules/')

registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context)
    } catch (error) {
      const missing = error?.code === 'ERR_MODULE_NOT_FOUND' ? error.url : undefined
      if (typeof missing === 'string' && missing.startsWith('file:') && missing.endsWith('.js')) {
        return nextResolve(`${missing.slice(0, -3)}.ts`, context)
      }
      throw error
    }
  },
  load(url, context, nextLoad) {
    if (!isTypeScript(url)) return nextLoad(url, context)
    const { source } = nextLoad(url, { ...context, format: 'module' })
    const { code } = transformSync(String(source), { ...OPTIONS, filename: fileURLToPath(url) })
    return { format: 'module', source: `${code}\n//# sourceURL=${url}`, shortCircuit: true }
  },
})
