import { createHash } from 'node:crypto';

// The page's stylesheet and its one script are files of their own so the Content-Security-Policy
// can forbid inline code; their names carry a content hash so they can be cached forever.

const CSS = `
:root{--fg:#1f2328;--muted:#57606a;--bg:#fff;--panel:#f6f8fa;--line:#d0d7de;--link:#0550ae;
--passed:#1a7f37;--failed:#cf222e;--error:#9a3412;--skipped:#57606a;--running:#0550ae;--queued:#6e7781;
--failed-bg:#ffebe9;--error-bg:#fff1e5;--focus:#0969da;font-size:16px}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:1200px;margin:0 auto;padding:24px 20px 40px}
a{color:var(--link)}
a:focus-visible,summary:focus-visible,button:focus-visible,video:focus-visible{outline:3px solid var(--focus);outline-offset:2px;border-radius:3px}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;background:var(--panel);border-radius:4px;padding:1px 4px;word-break:break-all}
h1{font-size:26px;margin:4px 0 12px;display:flex;gap:12px;align-items:center;flex-wrap:wrap}
h2{font-size:19px;margin:28px 0 10px}
h3{font-size:16px;margin:18px 0 8px}
.skip-link{position:absolute;left:-9999px}.skip-link:focus{left:8px;top:8px;background:#fff;padding:6px 10px;z-index:10}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.muted{color:var(--muted);font-weight:normal}
.crumbs{margin:0;color:var(--muted)}
.page-header{border-bottom:1px solid var(--line);padding-bottom:12px}
.summary{font-size:17px;margin:0 0 12px}
.meta{display:flex;flex-wrap:wrap;gap:6px 28px;margin:0}
.meta div{display:flex;gap:8px}.meta dt{color:var(--muted)}.meta dd{margin:0}
.chip{display:inline-block;font-size:12px;font-weight:600;line-height:20px;padding:0 9px;border-radius:10px;color:#fff;text-transform:uppercase;letter-spacing:.03em;vertical-align:middle;white-space:nowrap}
.chip-passed{background:var(--passed)}.chip-failed{background:var(--failed)}.chip-error{background:var(--error)}
.chip-skipped{background:var(--skipped)}.chip-running{background:var(--running)}.chip-queued{background:#fff;color:var(--fg);box-shadow:inset 0 0 0 1px var(--queued)}
.live-hint{margin:10px 0 0;color:var(--running)}
.counts{margin-top:16px}
.counters{list-style:none;display:flex;flex-wrap:wrap;gap:10px;margin:0 0 10px;padding:0}
.counter{border:1px solid var(--line);border-radius:8px;padding:6px 14px;min-width:96px;color:var(--muted)}
.counter .n{display:block;font-size:24px;font-weight:700;color:var(--fg)}
.counter-passed .n{color:var(--passed)}.counter-failed .n{color:var(--failed)}.counter-error .n{color:var(--error)}.counter-running .n{color:var(--running)}
.counter.zero .n{color:var(--muted)}
.progress{display:block;width:100%;height:10px;border-radius:5px;overflow:hidden}
.track{fill:#eaeef2}
.fill-passed{fill:var(--passed)}.fill-failed{fill:var(--failed)}.fill-error{fill:var(--error)}.fill-skipped{fill:#8c959f}.fill-running{fill:var(--running)}.fill-queued{fill:#d0d7de}
.group h2{display:inline}
.group-details>summary{cursor:pointer;margin:28px 0 10px}
.tests{list-style:none;margin:0;padding:0}
.test{border:1px solid var(--line);border-radius:8px;margin:0 0 8px;background:#fff}
.group-failed .test{border-left:4px solid var(--failed)}.group-error .test{border-left:4px solid var(--error)}
.test>details>summary{cursor:pointer;padding:10px 14px;display:flex;flex-direction:column;gap:2px}
.summary-line{display:flex;gap:10px;align-items:center;flex-wrap:wrap}
.test-name{font-weight:600}.dur{color:var(--muted);font-variant-numeric:tabular-nums}
.test-summary{color:var(--muted);padding-left:2px}
.test-body{padding:0 14px 12px;border-top:1px solid var(--line)}
.run-link{margin:10px 0 0}
.callout{border-radius:8px;padding:12px 16px;margin:14px 0;display:flex;gap:20px;align-items:flex-start;justify-content:space-between}
.callout-text{flex:1 1 auto;min-width:0}.callout-shot{flex:0 0 auto}
.callout h2,.callout h3{margin:0 0 6px}
.callout-failed{background:var(--failed-bg);border:1px solid #ffcecb;border-left:5px solid var(--failed)}
.callout-error{background:var(--error-bg);border:1px solid #ffd8b5;border-left:5px solid var(--error)}
.why{margin:0 0 6px;white-space:pre-wrap;font-weight:500}
.code{margin:0;color:var(--muted)}
figure{margin:0}figcaption{font-size:12px;color:var(--muted);max-width:320px}
.shot{display:inline-block;border:1px solid var(--line);border-radius:4px;overflow:hidden;background:var(--panel);line-height:0}
.shot img{display:block;object-fit:cover;object-position:top}
.shot-thumb img{width:96px;height:60px}
.shot-large img{width:320px;max-width:40vw;height:auto;max-height:220px}
.table-wrap{overflow-x:auto}
.steps{border-collapse:collapse;width:100%;font-size:14px}
.steps th,.steps td{border-bottom:1px solid var(--line);padding:6px 8px;text-align:left;vertical-align:middle}
.steps thead th{color:var(--muted);font-weight:600;font-size:13px}
.steps th.label{font-weight:normal}
.steps .num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.steps .target{max-width:280px}
.action{font-weight:600}
.bar-cell{width:26%;min-width:120px}
.bar{display:block;width:100%;height:12px;border-radius:2px}
.step-failed{background:#fff5f5}.step-error{background:#fffaf5}
.step-error-row td{border-bottom:1px solid var(--line);padding-top:0}
.step-message{margin:0;color:var(--failed);white-space:pre-wrap;font-size:13px}
.recording video{display:block;max-width:100%;width:640px;border:1px solid var(--line);border-radius:6px;margin:0 0 10px;background:#000}
.trace-links{list-style:none;padding:0;margin:0}.trace-links li{display:flex;gap:14px;align-items:center;flex-wrap:wrap}
.button{display:inline-block;background:var(--link);color:#fff;text-decoration:none;padding:6px 14px;border-radius:6px;font-weight:600}
.button:hover{background:#033d8b}
.shots{list-style:none;padding:0;margin:0;display:flex;flex-wrap:wrap;gap:12px}
.skip{color:var(--muted)}
.live-note{position:fixed;bottom:12px;right:12px;margin:0;background:var(--fg);color:#fff;padding:6px 12px;border-radius:6px;font-size:13px}
.live-note:empty{display:none}
.page-footer{max-width:1200px;margin:0 auto;padding:16px 20px 32px;color:var(--muted);font-size:13px;border-top:1px solid var(--line)}
@media (max-width:720px){.callout{flex-direction:column}.steps .target,.bar-cell{display:none}}
`;

// Live updates: polls the page's status.json while the suite or run is not terminal, updates
// counters and chips in place, and swaps in the final page once it is terminal. Also loads the
// steps of a passed test when its <details> is opened.
const JS = `(function(){
'use strict';
var STATUSES=['queued','running','passed','failed','error','skipped'];
function setChip(el,status){if(!el)return;STATUSES.forEach(function(s){el.classList.remove('chip-'+s)});el.classList.add('chip-'+status);el.textContent=status;}
function fmt(ms){if(ms===null||ms===undefined)return '\\u2013';if(ms<1000)return Math.round(ms)+' ms';if(ms<60000)return (ms/1000).toFixed(ms<10000?1:0)+' s';var t=Math.round(ms/1000);return Math.floor(t/60)+' min '+String(t%60).padStart(2,'0')+' s';}
function note(text){var n=document.getElementById('live-note');if(n)n.textContent=text;}
function apply(s){
  setChip(document.querySelector('[data-live-status]'),s.status);
  if(s.counts){Object.keys(s.counts).forEach(function(k){var el=document.querySelector('[data-count="'+k+'"]');if(el){el.textContent=String(s.counts[k]);var li=el.parentElement;if(li&&k!=='total')li.classList.toggle('zero',s.counts[k]===0);}});
    var total=s.counts.total||0,x=0;['passed','failed','error','skipped','running','queued'].forEach(function(k){var r=document.querySelector('[data-segment="'+k+'"]');if(!r)return;var w=total?s.counts[k]/total*100:0;r.setAttribute('x',x.toFixed(2));r.setAttribute('width',w.toFixed(2));x+=w;});}
  s.runs.forEach(function(r){document.querySelectorAll('[data-run="'+r.id+'"]').forEach(function(el){
    setChip(el.querySelector('[data-run-status]')||document.querySelector('[data-run-status]'),r.status);
    var sum=el.querySelector('[data-run-summary]');if(sum&&sum.firstChild&&sum.firstChild.nodeType===3)sum.firstChild.nodeValue=r.resultSummary;else if(sum)sum.textContent=r.resultSummary;
    var d=el.querySelector('[data-run-duration]')||document.querySelector('[data-run-duration]');if(d)d.textContent=fmt(r.durationMs);
  });});
}
function openIds(main){var ids=[];main.querySelectorAll('details[id][open]').forEach(function(d){ids.push(d.id)});return ids;}
function finish(main){
  fetch(location.href,{cache:'no-store',credentials:'same-origin'}).then(function(r){if(!r.ok)throw new Error(String(r.status));return r.text();}).then(function(text){
    var doc=new DOMParser().parseFromString(text,'text/html');var next=doc.querySelector('main');if(!next)return;
    var wasOpen=openIds(main);main.innerHTML=next.innerHTML;main.removeAttribute('data-live');document.title=doc.title;
    wasOpen.forEach(function(id){var d=document.getElementById(id);if(d)d.open=true;});
    wire(main);note('Finished: '+(document.querySelector('[data-live-status]')||{textContent:''}).textContent);
  }).catch(function(){note('Finished. Reload the page to see the final result.');});
}
function poll(main){
  var url=main.getAttribute('data-live'),delay=2000;
  function tick(){
    fetch(url,{cache:'no-store',credentials:'same-origin',headers:{accept:'application/json'}}).then(function(r){if(!r.ok)throw new Error(String(r.status));return r.json();}).then(function(s){
      apply(s);delay=2000;
      if(s.terminal){finish(main);return;}
      setTimeout(tick,delay);
    }).catch(function(){delay=Math.min(delay*2,30000);note('Live updates paused; retrying.');setTimeout(tick,delay);});
  }
  setTimeout(tick,delay);
}
function wire(root){
  root.querySelectorAll('details[data-fragment]').forEach(function(d){
    d.addEventListener('toggle',function(){
      if(!d.open||d.getAttribute('data-loaded'))return;d.setAttribute('data-loaded','1');
      var slot=d.querySelector('.lazy');
      fetch(d.getAttribute('data-fragment'),{credentials:'same-origin'}).then(function(r){if(!r.ok)throw new Error(String(r.status));return r.text();}).then(function(h){if(slot)slot.innerHTML=h;}).catch(function(){d.removeAttribute('data-loaded');});
    });
  });
}
document.addEventListener('DOMContentLoaded',function(){
  var main=document.querySelector('main');if(!main)return;wire(main);
  if(main.hasAttribute('data-live'))poll(main);
});
})();
`;

function hashed(stem: string, ext: string, body: string) {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { name: `${stem}.${hash}.${ext}`, body: Buffer.from(body), etag: `"${hash}"` };
}

export const ASSETS = {
  css: { ...hashed('view', 'css', CSS), type: 'text/css; charset=utf-8' },
  js: { ...hashed('live', 'js', JS), type: 'text/javascript; charset=utf-8' },
};
