export * from './enums';
export * from './problems';
export * from './runs';
export * from './run-request';
export * from './project-file';
export * from './jobs';
export * from './validate';
export * from './openapi';
