// The dashboard's stylesheet, served as /ui/assets/dashboard.css (a file,
// never inline: the Content-Security-Policy allows styles from this origin
// only). Colours keep a contrast of at least 4.5:1 against their background;
// the focus ring is always visible. Values from the database (a 128-character
// job type, a worker id, a dedupe key) may be one unbreakable word: cells,
// facts and headings break them anywhere and the queue filter shrinks to the
// page, so no value widens the page or pushes a table's columns out of view.
export const STYLESHEET = String.raw`
:root{--fg:#1a1d21;--muted:#4a5360;--bg:#fff;--line:#d5dae0;--soft:#f4f6f8;--accent:#0b57a4;--focus:#1b6ef3;
--ok:#216e42;--bad:#b3261e;--warn:#8a5a00;--violet:#5b3aa8;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:15px;color:var(--fg);background:var(--bg)}
*{box-sizing:border-box}body{margin:0;line-height:1.45}
a{color:var(--accent)}a:hover{text-decoration-thickness:2px}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem;z-index:9}.skip:focus{left:.5rem}
header.top{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.5rem;padding:.6rem 1.25rem;background:#1f2933;color:#fff}
header.top a{color:#fff}.brand{font-weight:700;letter-spacing:.02em}.ns{color:#d9e2ec}.ns code{color:#fff}
nav ul{display:flex;flex-wrap:wrap;gap:.25rem;margin:0;padding:0;list-style:none}
nav a{display:block;padding:.3rem .7rem;border-radius:4px;text-decoration:none}
nav a[aria-current=page]{background:#fff;color:#1f2933;font-weight:600}nav a:hover{background:#3e4c59}
nav a[aria-current=page]:hover{background:#fff}
.who{margin-left:auto;display:flex;align-items:center;gap:.6rem;color:#d9e2ec}
.who form{margin:0}
main{padding:1rem 1.25rem 2rem;max-width:1400px}
h1{font-size:1.35rem;margin:.2rem 0 .8rem}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
.lede{color:var(--muted);margin:-.4rem 0 1rem}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);background:var(--soft)}
td.num,th.num{text-align:right}tbody tr:hover{background:#f8fafc}td.wide{min-width:16rem}td.name{min-width:7rem}
.table-wrap{position:relative;overflow-x:auto;border:1px solid var(--line);border-radius:6px}
.table-wrap table{border:0}.muted{color:var(--muted)}.small{font-size:.85rem}
td,dd,h1,figcaption,.lede,.problem,.notice{overflow-wrap:anywhere}.badge,td.num,time{white-space:nowrap}
button,.button{overflow-wrap:normal}label,select{max-width:100%}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:.6rem .8rem;overflow:auto;max-height:28rem;margin:.3rem 0}pre.message{white-space:pre-wrap;overflow-wrap:anywhere}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:999px;font-size:.8rem;font-weight:600;border:1px solid transparent}
.s-ready{background:#e3eefc;color:#0b4a8c}.s-running{background:#dcf5e7;color:#15573a}.s-waiting{background:#eee8fb;color:#4b2f91}
.s-succeeded{background:#eceff2;color:#37414b}.s-failed{background:#fde7e8;color:#9b1c1c}.s-cancelled{background:#fbf1d6;color:#6b4a00}
.s-paused{background:#fde7e8;color:#9b1c1c}.s-active{background:#dcf5e7;color:#15573a}.s-draining{background:#fbf1d6;color:#6b4a00}.s-dead{background:#eceff2;color:#37414b}
.note{color:var(--muted);font-size:.85rem}.note b{color:var(--fg);font-weight:600}
form.filters{display:flex;flex-wrap:wrap;align-items:flex-end;gap:.6rem 1rem;margin:0 0 1rem;padding:.7rem .9rem;background:var(--soft);border:1px solid var(--line);border-radius:6px}
label{display:flex;flex-direction:column;font-size:.8rem;font-weight:600;color:var(--muted);gap:.15rem}
input,select,button,textarea{font:inherit;font-size:.9rem}
input,select,textarea{padding:.3rem .45rem;border:1px solid #8a94a0;border-radius:4px;background:#fff;color:var(--fg);min-width:10rem}
button,.button{display:inline-block;padding:.3rem .8rem;border-radius:4px;border:1px solid #8a94a0;background:#fff;color:var(--fg);cursor:pointer;text-decoration:none}
button:hover,.button:hover{background:var(--soft)}button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
button.primary:hover{background:#09467f}button.danger{color:#9b1c1c;border-color:#c46a6a}
form.inline{display:inline;margin:0}
form.decide{display:flex;flex-wrap:wrap;align-items:flex-end;gap:.4rem .6rem;margin:0}form.decide .choices{display:flex;flex-wrap:wrap;gap:.4rem}form.decide .choices button{max-width:14em;overflow-wrap:anywhere;text-align:left}
.who button{background:transparent;color:#fff;border-color:#9aa5b1}.who button:hover{background:#3e4c59}
.pager{display:flex;gap:1rem;align-items:center;margin:.7rem 0}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1.2rem;margin:0 0 1rem}
dl.facts dt{color:var(--muted);font-weight:600;font-size:.85rem}dl.facts dd{margin:0}
.actions{display:flex;gap:.5rem;margin:.2rem 0 1rem}
.notice{padding:.5rem .8rem;border-radius:6px;border:1px solid #9fcfb2;background:#eaf7ef;margin:0 0 1rem}
.problem{padding:.5rem .8rem;border-radius:6px;border:1px solid #e3a5a5;background:#fdeeee;margin:0 0 1rem}
.live-bar{display:flex;gap:.8rem;align-items:center;font-size:.85rem;color:var(--muted);margin:-.3rem 0 .8rem}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(430px,100%),1fr));gap:1rem}
figure.chart{margin:0;padding:.6rem .8rem;border:1px solid var(--line);border-radius:6px}
figure.chart figcaption{font-size:.85rem;color:var(--muted);margin-bottom:.3rem}figure.chart figcaption b{color:var(--fg)}
figure.chart svg{display:block;width:100%;height:auto}
.c-axis{stroke:#8a94a0;stroke-width:1}.c-grid{stroke:#e4e7eb;stroke-width:1}.c-label{fill:#4a5360;font-size:10px}
.c-succeeded{fill:#2b7a4b}.c-failed{fill:#c62828}.c-retried{fill:#c77d00}.c-recovered,.c-orphaned{fill:#6a4bc4}.c-cancelled,.c-released{fill:#6b7280}
.c-line{fill:none;stroke:#0b57a4;stroke-width:2}.c-area{fill:#0b57a4;fill-opacity:.12}
.legend{display:flex;flex-wrap:wrap;gap:.2rem .8rem;font-size:.8rem;color:var(--muted);margin:.3rem 0 0;padding:0;list-style:none}
.legend i{display:inline-block;width:.7rem;height:.7rem;border-radius:2px;margin-right:.3rem;vertical-align:-1px}
.l-succeeded{background:#2b7a4b}.l-failed{background:#c62828}.l-retried{background:#c77d00}.l-recovered{background:#6a4bc4}.l-cancelled{background:#6b7280}
details summary{cursor:pointer;color:var(--accent);font-size:.85rem}
.signin{max-width:30rem;margin:3rem auto;padding:1.5rem;border:1px solid var(--line);border-radius:8px}
.signin form{display:flex;flex-direction:column;gap:.8rem}.signin input{width:100%}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
`;
