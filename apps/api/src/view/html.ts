/**
 * A strict HTML-escaping template tag. Every interpolated value is escaped unless it is already
 * `SafeHtml` (the result of another `html` call), so markup can only come from template literals
 * written in this module's callers, never from data.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Escapes text for use in element content and in quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

type Interpolation = SafeHtml | string | number | boolean | null | undefined | readonly Interpolation[];

function renderValue(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(renderValue).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  // The cooked literals interleaved with the rendered values, as a template literal would join them.
  return new SafeHtml(String.raw({ raw: strings }, ...values.map(renderValue)));
}
