// Where run artifacts are kept (docs/ARTIFACTS.md): the store interface, the local and S3 stores,
// and the choice between them.
export * from './store';
export * from './s3';
export * from './create';
