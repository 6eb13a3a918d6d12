/**
 * The images a changed `toHaveScreenshot` leaves: expected, actual and diff, each a 1280×720 PNG
 * Chromium takes of a generated dashboard (text, a table, a chart, coloured cards), so their size
 * and decoding are those of a real page's screenshot, not of a flat colour.
 */
import type { Browser } from 'playwright';

/** The three files Playwright attaches of one changed snapshot. */
export type SnapshotImages = { expected: Buffer; actual: Buffer; diff: Buffer };

/** A small deterministic generator, so every run of the bench draws the same pages. */
function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const WORDS =
  'order invoice customer shipped pending refund account total region north south east west weekly monthly revenue basket checkout coupon delivery warehouse stock returns margin'.split(
    ' ',
  );

type Look = 'expected' | 'actual' | 'diff';

/** The dashboard's markup. `actual` changes a few figures, a button and a banner; `diff` greys the page and marks those in red. */
function dashboard(variant: number, look: Look): string {
  const rand = prng(variant * 7919 + 17);
  const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
  const changed = look !== 'expected';
  const mark = (text: string) => (look === 'diff' ? `<span class="d">${text}</span>` : text);
  const rows = Array.from({ length: 14 }, (_, i) => {
    const amount = (rand() * 9000 + 100).toFixed(2);
    const shown = changed && i % 5 === 2 ? mark((Number(amount) * 1.07).toFixed(2)) : amount;
    return `<tr><td>#${10_000 + variant * 100 + i}</td><td>${words(3)}</td><td>${words(1)}</td><td class="n">${shown} EUR</td></tr>`;
  }).join('');
  const points = Array.from(
    { length: 48 },
    (_, i) => `${i * 10},${(80 + Math.sin(i / 4 + variant) * 50 + rand() * 30).toFixed(1)}`,
  );
  const cards = Array.from({ length: 4 }, (_, i) => {
    const hue = Math.floor(rand() * 360);
    return `<div class="card" style="background:${i === 0 ? `linear-gradient(135deg,hsl(${hue} 70% 92%),hsl(${(hue + 60) % 360} 60% 80%))` : `hsl(${hue} 70% 90%)`}"><b>${(rand() * 100).toFixed(1)}%</b><p>${words(6)}</p></div>`;
  }).join('');
  const grey =
    look === 'diff'
      ? 'body *{color:#bbb!important;border-color:#eee!important}.card,.btn,header{background:#f3f3f3!important}svg polyline{stroke:#ddd}'
      : '';
  return `<!doctype html><html><head><style>
    body{margin:0;font:14px/1.4 "Liberation Sans",sans-serif;color:#222;background:#fafafa}
    header{display:flex;gap:24px;align-items:center;padding:14px 24px;background:#1f3a5f;color:#fff}
    header nav a{color:#cfe0ff;margin-right:16px} main{display:grid;grid-template-columns:220px 1fr;gap:20px;padding:18px 24px}
    aside li{margin:6px 0} .cards{display:grid;grid-template-columns:repeat(4,1fr);gap:12px}
    .card{border-radius:8px;padding:10px} .card b{font-size:22px} table{width:100%;border-collapse:collapse;font-size:13px}
    td{border-bottom:1px solid #ddd;padding:4px 6px} .n{text-align:right} .btn{background:${changed ? '#d9480f' : '#1971c2'};color:#fff;padding:6px 14px;border-radius:4px}
    .banner{background:#fff3bf;padding:6px 10px;margin-bottom:8px} .d{color:#f00!important;background:#fdd} ${grey}
  </style></head><body>
    <header><strong>Shop admin ${variant}</strong><nav>${WORDS.slice(0, 6)
      .map((w) => `<a>${w}</a>`)
      .join('')}</nav><span class="btn">${mark('Export')}</span></header>
    <main><aside><ul>${Array.from({ length: 14 }, () => `<li>${words(2)}</li>`).join('')}</ul></aside><section>
      ${changed ? `<div class="banner">${mark(`Notice: ${words(8)}`)}</div>` : ''}
      <div class="cards">${cards}</div>
      <svg width="480" height="170"><polyline fill="none" stroke="#1971c2" stroke-width="2" points="${points.join(' ')}"/></svg>
      <table>${rows}</table><p>${words(40)}</p>
    </section></main></body></html>`;
}

/** `variants` sets of images, each taken in a fresh 1280×720 page of `browser`. */
export async function snapshotImages(browser: Browser, variants: number): Promise<SnapshotImages[]> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, deviceScaleFactor: 1 });
  try {
    const page = await context.newPage();
    const shot = async (variant: number, look: Look) => {
      await page.setContent(dashboard(variant, look));
      return page.screenshot({ type: 'png' });
    };
    const sets: SnapshotImages[] = [];
    for (let v = 0; v < variants; v++)
      sets.push({ expected: await shot(v, 'expected'), actual: await shot(v, 'actual'), diff: await shot(v, 'diff') });
    return sets;
  } finally {
    await context.close();
  }
}
