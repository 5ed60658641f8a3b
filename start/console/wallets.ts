/*
| The console's "wallets" pages (registered inside the signed-in group of
| start/console/index.ts: paths here are relative to ADMIN_PATH).
*/
export function walletsRoutes() {}
