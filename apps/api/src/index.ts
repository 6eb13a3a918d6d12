export { createApp, type AppDeps } from './app';
export { readApiConfig, API_DEFAULTS, type ApiConfig } from './config';
export { createApiRedis, type ApiRedis } from './redis';
export { ApiError, problemBody } from './errors';
