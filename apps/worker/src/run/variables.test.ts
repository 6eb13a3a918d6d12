import type { Step } from '@testrun/contracts';
import { findUnknownVariable, referencedNames, resolveStep } from './variables';

const steps: Step[] = [
  { action: 'goto', url: '{{vars.PATH}}/login' },
  { action: 'fill', selector: '#user', value: '{{ vars.USER }}' },
  { action: 'fill', selector: '#pw', value: '{{secrets.PASSWORD}}', name: 'password' },
  { action: 'expectText', selector: 'h1', text: 'Hello {{vars.USER}}' },
];
const values = { vars: { PATH: '/app', USER: 'ada' }, secrets: { PASSWORD: 's3cret' } };

describe('step variables', () => {
  it('lists the names referenced, by kind', () => {
    const names = referencedNames(steps);
    expect([...names.vars].sort()).toEqual(['PATH', 'USER']);
    expect([...names.secrets]).toEqual(['PASSWORD']);
  });

  it('replaces every reference in the string fields and leaves the rest', () => {
    expect(steps.map((s) => resolveStep(s, values))).toEqual([
      { action: 'goto', url: '/app/login' },
      { action: 'fill', selector: '#user', value: 'ada' },
      { action: 'fill', selector: '#pw', value: 's3cret', name: 'password' },
      { action: 'expectText', selector: 'h1', text: 'Hello ada' },
    ]);
  });

  it('names the first reference that has no value, never a value', () => {
    expect(findUnknownVariable(steps, values)).toBeNull();
    expect(findUnknownVariable(steps, { vars: values.vars, secrets: {} })).toEqual({
      step: 3,
      reference: 'secrets.PASSWORD',
    });
    expect(findUnknownVariable([{ action: 'click', selector: '{{vars.NOPE}}' }], values)).toEqual({
      step: 1,
      reference: 'vars.NOPE',
    });
  });

  it('does not read inherited properties as values', () => {
    expect(findUnknownVariable([{ action: 'click', selector: '{{vars.constructor}}' }], values)).toEqual({
      step: 1,
      reference: 'vars.constructor',
    });
  });
});
