import { playwrightEnv } from './sandboxed-cli';

describe("the sandbox's environment", () => {
  it('sets CI=1, FORCE_COLOR=0 and NO_COLOR=1 by default, and nothing of the worker’s', () => {
    const env = playwrightEnv();
    expect(env).toMatchObject({ CI: '1', FORCE_COLOR: '0', NO_COLOR: '1', HOME: '/work/home', TMPDIR: '/work/tmp' });
    expect(
      Object.keys(env).filter(
        (name) => !/^(CI|FORCE_COLOR|NO_COLOR|PATH|HOME|TMPDIR|TESTRUN_.+|PLAYWRIGHT_.+)$/.test(name),
      ),
    ).toEqual([]);
  });

  it("lets a test's variables change CI, FORCE_COLOR and NO_COLOR", () => {
    expect(playwrightEnv({ CI: '' })).toMatchObject({ CI: '' });
    expect(playwrightEnv({ CI: '0', FORCE_COLOR: '1', NO_COLOR: '' })).toMatchObject({
      CI: '0',
      FORCE_COLOR: '1',
      NO_COLOR: '',
    });
  });

  it('keeps what the service needs to work whatever the variables say', () => {
    const mine = playwrightEnv();
    const theirs = playwrightEnv({
      PATH: '/tmp/evil',
      HOME: '/tmp',
      TMPDIR: '/tmp',
      TESTRUN_STATE_DIR: '/tmp',
      TESTRUN_BUNDLE_DIR: '/tmp',
      PLAYWRIGHT_BROWSERS_PATH: '/tmp',
      PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '0',
      PLAYWRIGHT_TRANSFORM_CACHE_DIR: '/tmp',
      SHOP_PASSWORD: 'kept',
    });
    expect(theirs).toEqual({ ...mine, SHOP_PASSWORD: 'kept' });
  });
});
