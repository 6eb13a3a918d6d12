import type { Step } from '@testrun/contracts';
import { describeStep, describeTarget, summarizeFailure, summarizePass } from './describe-step';
import { displayUrl } from '../support/text-format';

const base = 'http://127.0.0.1:4010';

it('labels every action the way summaries quote it', () => {
  const cases: Array<[Step, string, string]> = [
    [{ action: 'goto', url: '/' }, 'goto "/"', `${base}/`],
    [{ action: 'click', selector: 'text=Sign in' }, 'click "text=Sign in"', 'text=Sign in'],
    [{ action: 'fill', selector: '#email', value: 'a@b.c' }, 'fill "#email"', '#email'],
    [{ action: 'press', key: 'Enter' }, 'press "Enter"', 'page'],
    [{ action: 'press', selector: '#q', key: 'Enter' }, 'press "Enter" on "#q"', '#q'],
    [{ action: 'select', selector: '#size', value: 'm' }, 'select "#size"', '#size'],
    [{ action: 'waitFor', selector: '#late', state: 'attached' }, 'waitFor "#late"', '#late'],
    [{ action: 'expectText', selector: 'h1', text: 'Shop' }, 'expectText "h1"', 'h1'],
    [{ action: 'expectUrl', url: '/about' }, 'expectUrl "/about"', `${base}/about`],
    [{ action: 'expectUrl', pattern: '/about$', flags: 'i' }, 'expectUrl //about$/i', '//about$/i'],
    [{ action: 'expectTitle', title: 'Shop' }, 'expectTitle "Shop"', 'Shop'],
    [{ action: 'screenshot', name: 'cart' }, 'screenshot "cart"', 'cart'],
    [{ action: 'screenshot', fullPage: true }, 'screenshot', 'full page'],
    [{ action: 'expectScreenshot', name: 'home' }, 'expectScreenshot "home"', 'viewport'],
    [{ action: 'expectScreenshot', name: 'home', fullPage: true }, 'expectScreenshot "home"', 'full page'],
    [{ action: 'expectScreenshot', name: 'hero', selector: '#hero' }, 'expectScreenshot "hero" of "#hero"', '#hero'],
    [{ action: 'wait', ms: 500 }, 'wait 500 ms', '500 ms'],
  ];
  for (const [step, label, target] of cases) {
    expect([describeStep(step), describeTarget(step, base)]).toEqual([label, target]);
  }
});

it('writes one-sentence summaries', () => {
  const step: Step = { action: 'click', selector: 'text=Sign in' };
  expect(
    summarizeFailure(3, step, {
      outcome: 'failed',
      message: 'element "text=Sign in" not found within 5 s',
      reason: 'element not found within 5 s',
    }),
  ).toBe('Failed at step 3 (click "text=Sign in"): element not found within 5 s');
  expect(summarizeFailure(1, { action: 'goto', url: '/' }, { outcome: 'error', message: 'boom' })).toBe(
    'Error at step 1 (goto "/"): boom',
  );
  const reason = 'home.png differs from its baseline: 12 pixels (ratio 0.01 of all image pixels) are different';
  expect(
    summarizeFailure(
      2,
      { action: 'expectScreenshot', name: 'home' },
      { outcome: 'failed', code: 'screenshot_changed', reason },
    ),
  ).toBe(`Screenshot changed at step 2 (expectScreenshot "home"): ${reason}`);
  expect(summarizePass(4, 1_234)).toBe('Passed: 4 steps in 1.2 s.');
  expect(summarizePass(1, 850)).toBe('Passed: 1 step in 850 ms.');
});

it('keeps credentials out of URLs it shows', () => {
  expect(displayUrl('https://demo:preview@preview.example.com/x?y=1')).toBe('https://preview.example.com/x?y=1');
  expect(describeTarget({ action: 'goto', url: '/cart' }, 'https://demo:preview@preview.example.com/')).toBe(
    'https://preview.example.com/cart',
  );
});
