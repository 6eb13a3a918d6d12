export { createApp } from './app';
export type { AppDeps } from './deps';
export { readApiConfig, type ApiConfig } from './config';
export { createApiRedis, type ApiRedis } from './redis';
export { createApiServer } from './server';
export { ChangeWatcher } from './services/long-poll';
