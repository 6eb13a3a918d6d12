import { chooseVersion, takesTestList, type PlaywrightPackages } from './versions';

const at = (version: string): PlaywrightPackages => ({ test: `/t/${version}`, playwright: '', core: '', version });
const available = ['1.39.0', '1.44.1', '1.45.3', '1.60.0', '1.65.1'].map(at);
const service = available[4] as PlaywrightPackages;
const chosen = (pinned: string | null) => {
  const { packages, exact } = chooseVersion(pinned, available, service);
  return [packages.version, exact];
};

describe('chooseVersion', () => {
  it('runs a bundle on its own major.minor, whatever the patch', () => {
    expect(chosen('1.39.0')).toEqual(['1.39.0', true]);
    expect(chosen('1.44.0')).toEqual(['1.44.1', true]);
    expect(chosen('1.65.3')).toEqual(['1.65.1', true]);
    expect(chosen('1.60.0-beta-1')).toEqual(['1.60.0', true]);
  });

  it('runs a minor the worker does not have on the nearest newer one, and says so', () => {
    expect(chosen('1.40.2')).toEqual(['1.44.1', false]);
    expect(chosen('1.38.0')).toEqual(['1.39.0', false]);
    expect(chosen('1.61.0')).toEqual(['1.65.1', false]);
  });

  it('runs a bundle newer than all on the newest, and one that names no version on the service’s', () => {
    expect(chosen('1.70.0')).toEqual(['1.65.1', false]);
    expect(chosen('2.0.0')).toEqual(['1.65.1', false]);
    expect(chosen(null)).toEqual(['1.65.1', true]);
    expect(chosen('latest')).toEqual(['1.65.1', true]);
    expect(chooseVersion('1.39.0', [], service).packages).toBe(service);
  });
});

describe('takesTestList', () => {
  it('is 1.56 and later', () => {
    expect(takesTestList(at('1.55.1'))).toBe(false);
    expect(takesTestList(at('1.39.0'))).toBe(false);
    expect(takesTestList(at('1.56.0'))).toBe(true);
    expect(takesTestList(at('1.65.1'))).toBe(true);
  });
});
