import { ConfigError, readArtifactStoreConfig, readCommonConfig } from '../env';
import { describeArtifactStore } from './create';
import { readTargetPolicyConfig } from '../target-policy';

const read = (env: Record<string, string>) => readArtifactStoreConfig(env, '/srv/default');

test('the local directory stays the default; ARTIFACTS_URL=file:/// names one too and wins over ARTIFACTS_DIR', () => {
  expect(read({})).toEqual({ kind: 'local', dir: '/srv/default' });
  expect(read({ ARTIFACTS_DIR: '/data/a' })).toEqual({ kind: 'local', dir: '/data/a' });
  expect(read({ ARTIFACTS_URL: 'file:///data/b', ARTIFACTS_DIR: '/data/a' })).toEqual({
    kind: 'local',
    dir: '/data/b',
  });
});

test('s3://bucket/prefix with the standard AWS variables', () => {
  expect(read({ ARTIFACTS_URL: 's3://team-artifacts/testrun/prod/', AWS_REGION: 'eu-west-1' })).toEqual({
    kind: 's3',
    bucket: 'team-artifacts',
    prefix: 'testrun/prod',
    region: 'eu-west-1',
    endpoint: undefined,
    forcePathStyle: false,
  });
  const minio = read({
    ARTIFACTS_URL: 's3://artifacts',
    AWS_ENDPOINT_URL: 'http://other:9000',
    AWS_ENDPOINT_URL_S3: 'http://minio.storage:9000',
    ARTIFACTS_S3_FORCE_PATH_STYLE: 'true',
  });
  // The S3-specific endpoint wins; with an endpoint the region may be left out.
  expect(minio).toMatchObject({
    prefix: '',
    endpoint: 'http://minio.storage:9000',
    region: 'us-east-1',
    forcePathStyle: true,
  });
  expect(describeArtifactStore(minio)).toBe('s3://artifacts at http://minio.storage:9000');
});

test.each([
  [{ ARTIFACTS_URL: 'gs://bucket' }, 'ARTIFACTS_URL must be a s3 or file URL'],
  [{ ARTIFACTS_URL: 's3://Bad_Bucket', AWS_REGION: 'x' }, 'not a valid S3 bucket name'],
  [{ ARTIFACTS_URL: 's3://bucket/a b', AWS_REGION: 'x' }, "ARTIFACTS_URL's prefix"],
  [{ ARTIFACTS_URL: 's3://key:secret@bucket', AWS_REGION: 'x' }, 'no credentials'],
  [{ ARTIFACTS_URL: 's3://bucket' }, 'AWS_REGION is required'],
  [{ ARTIFACTS_URL: 's3://bucket', AWS_ENDPOINT_URL_S3: 'ftp://x' }, 'AWS_ENDPOINT_URL_S3 must be a http or https URL'],
  [
    { ARTIFACTS_URL: 's3://bucket', AWS_ENDPOINT_URL: 'http://k:s@minio:9000' },
    'AWS_ENDPOINT_URL must not carry credentials',
  ],
  [
    { ARTIFACTS_URL: 's3://bucket', AWS_REGION: 'x', ARTIFACTS_S3_FORCE_PATH_STYLE: 'yes' },
    'ARTIFACTS_S3_FORCE_PATH_STYLE must be one of',
  ],
  [{ ARTIFACTS_URL: 'file://host/data' }, 'no host'],
])('a bad setting stops the start with a message naming it: %j', (env, message) => {
  expect(() => read(env)).toThrow(ConfigError);
  expect(() => read(env)).toThrow(message);
});

test("runs may not reach the object store's own endpoint", () => {
  const env = {
    ARTIFACTS_URL: 's3://artifacts',
    AWS_ENDPOINT_URL_S3: 'http://10.20.5.4:9000',
    TESTRUN_SECRET: 'x'.repeat(32),
  };
  const config = readTargetPolicyConfig(env, readCommonConfig(env));
  expect(config.protectedEndpoints).toContainEqual({ host: '10.20.5.4', port: 9000 });
});
