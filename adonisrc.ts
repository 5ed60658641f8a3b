import { defineConfig } from '@adonisjs/core/app'

export default defineConfig({
  commands: [
    () => import('@adonisjs/core/commands'),
    () => import('@adonisjs/lucid/commands'),
    // The enabled plugins' commands (app/plugin_host/gateway_plugin.ts).
    () => import('#plugin_host/plugin_commands'),
  ],

  providers: [
    () => import('@adonisjs/core/providers/app_provider'),
    () => import('@adonisjs/core/providers/hash_provider'),
    {
      file: () => import('@adonisjs/core/providers/repl_provider'),
      environment: ['repl', 'test'],
    },
    () => import('@adonisjs/core/providers/vinejs_provider'),
    () => import('@adonisjs/core/providers/edge_provider'),
    () => import('@adonisjs/lucid/database_provider'),
    () => import('@adonisjs/redis/redis_provider'),
    () => import('@adonisjs/limiter/limiter_provider'),
    () => import('adonisjs-scheduler/scheduler_provider'),
    () => import('#providers/plugins_provider'),
    // After the plugins: their lang folders are part of the catalogue.
    () => import('@adonisjs/i18n/i18n_provider'),
    () => import('@adonisjs/static/static_provider'),
    // The admin console: sessions, CSRF and security headers, the session guard.
    () => import('@adonisjs/session/session_provider'),
    () => import('@adonisjs/shield/shield_provider'),
    () => import('@adonisjs/auth/auth_provider'),
  ],

  preloads: [
    () => import('#start/routes'),
    () => import('#start/kernel'),
    () => import('#start/events'),
    () => import('#start/scheduler'),
  ],

  tests: {
    suites: [
      {
        files: ['tests/unit/**/*.spec.ts'],
        name: 'unit',
        timeout: 10000,
      },
      {
        files: ['tests/functional/**/*.spec.ts'],
        name: 'functional',
        timeout: 60000,
      },
      {
        // The cashier page in Debian's Chromium (playwright-core); see tests/helpers/browser.ts.
        files: ['tests/browser/**/*.spec.ts'],
        name: 'browser',
        timeout: 120000,
      },
    ],
    forceExit: false,
  },

  metaFiles: [
    {
      pattern: 'resources/views/**/*.edge',
      reloadServer: false,
    },
    {
      pattern: 'public/**',
      reloadServer: false,
    },
    {
      pattern: 'resources/lang/**',
      reloadServer: false,
    },
    // A plugin's own texts and views (app/plugin_host/plugin_resources.ts).
    {
      pattern: 'plugins/*/lang/**',
      reloadServer: false,
    },
    {
      pattern: 'plugins/*/views/**/*.edge',
      reloadServer: false,
    },
  ],
})
