// The dashboard's one stylesheet and its one script (copy buttons, the playground's in-page render; every page works without it).
import { inPageSource } from '../../render/browser/in-page.ts';
import { dashboardScript } from './in-page/script.ts';

/** Served at /dashboard/assets/style.css. */
export const stylesheet = `
:root { --ink:#16181d; --muted:#5d6472; --line:#e3e6ec; --bg:#f6f7f9; --card:#fff; --accent:#3554d1; --accent-ink:#fff;
  --ok:#1a7f4b; --ok-bg:#e7f6ee; --warn:#8a5a00; --warn-bg:#fff4dc; --bad:#b42318; --bad-bg:#fdecea; --radius:10px; }
* { box-sizing: border-box; }
[hidden] { display:none !important; }
html { -webkit-text-size-adjust: 100%; }
body { margin:0; font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--ink); background:var(--bg); }
a { color:var(--accent); }
code, .mono { font-family: ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; font-size:.9em; }
header.top { background:var(--card); border-bottom:1px solid var(--line); }
header.top .bar { max-width:1120px; margin:0 auto; padding:.75rem 1rem; display:flex; flex-wrap:wrap; gap:.75rem 1.25rem; align-items:center; }
.brand { font-weight:700; letter-spacing:-.01em; color:var(--ink); text-decoration:none; font-size:1.1rem; }
.brand span { color:var(--accent); }
/* The tabs have a row of their own: one line on a desktop screen, wrapped on a phone so every tab is in view. */
nav.tabs { display:flex; flex-wrap:nowrap; gap:.25rem; flex:1 1 100%; order:1; min-width:0; overflow-x:auto; }
nav.tabs a { padding:.35rem .7rem; border-radius:8px; text-decoration:none; color:var(--muted); font-weight:500; white-space:nowrap; }
nav.tabs a[aria-current="page"] { background:var(--bg); color:var(--ink); }
.who { margin-left:auto; display:flex; gap:.5rem; align-items:center; flex-wrap:wrap; color:var(--muted); font-size:.9rem; }
main { max-width:1120px; margin:0 auto; padding:1.5rem 1rem 3rem; }
main.narrow { max-width:440px; }
h1 { font-size:1.5rem; margin:.25rem 0 1rem; letter-spacing:-.01em; }
h2 { font-size:1.1rem; margin:0 0 .75rem; }
.card { background:var(--card); border:1px solid var(--line); border-radius:var(--radius); padding:1.25rem; margin:0 0 1rem; }
.muted { color:var(--muted); }
.small { font-size:.875rem; }
label { display:block; font-weight:500; margin:.75rem 0 .25rem; }
input[type=email], input[type=password], input[type=text], input[type=url], input:not([type]), select { width:100%; padding:.6rem .7rem; border:1px solid var(--line); border-radius:8px; font:inherit; background:#fff; }
input:focus, select:focus, button:focus-visible { outline:2px solid var(--accent); outline-offset:1px; }
button, .button { display:inline-block; padding:.55rem 1rem; border-radius:8px; border:1px solid var(--accent); background:var(--accent); color:var(--accent-ink); font:inherit; font-weight:600; cursor:pointer; text-decoration:none; }
button.secondary, .button.secondary { background:#fff; color:var(--accent); }
button.danger { background:var(--bad); border-color:var(--bad); }
button.link { background:none; border:none; color:var(--accent); padding:0; font-weight:500; text-decoration:underline; }
button:disabled { opacity:.5; cursor:not-allowed; }
button.copy { padding:.3rem .6rem; font-size:.8rem; }
form.inline { display:inline; }
.row { display:flex; gap:.5rem; align-items:center; flex-wrap:wrap; }
.stack > * + * { margin-top:.75rem; }
.key { display:flex; gap:.5rem; align-items:center; flex-wrap:wrap; }
.key code { flex:1; min-width:0; overflow-wrap:anywhere; background:var(--bg); border:1px solid var(--line); border-radius:8px; padding:.5rem .6rem; }
pre { margin:0; white-space:pre-wrap; overflow-wrap:anywhere; background:#0f172a; color:#e2e8f0; padding:.75rem; border-radius:8px; font-size:.85rem; }
.notice { border-radius:var(--radius); padding:.8rem 1rem; margin:0 0 1rem; border:1px solid; }
.notice.ok { background:var(--ok-bg); color:var(--ok); border-color:#bfe6d0; }
.notice.warn { background:var(--warn-bg); color:var(--warn); border-color:#f2dca6; }
.notice.bad { background:var(--bad-bg); color:var(--bad); border-color:#f5c2bd; }
.pill { display:inline-block; padding:.05rem .5rem; border-radius:999px; font-size:.8rem; font-weight:600; background:var(--bg); color:var(--muted); }
.pill.ok { background:var(--ok-bg); color:var(--ok); } .pill.bad { background:var(--bad-bg); color:var(--bad); } .pill.warn { background:var(--warn-bg); color:var(--warn); }
table { width:100%; border-collapse:collapse; font-size:.925rem; }
th, td { text-align:left; padding:.5rem .4rem; border-bottom:1px solid var(--line); vertical-align:top; }
th { color:var(--muted); font-weight:600; font-size:.8rem; text-transform:uppercase; letter-spacing:.03em; }
td.url { max-width:280px; overflow-wrap:anywhere; }
td.capture { width:180px; max-width:180px; } .capture-large { max-width:480px; }
progress.meter { width:100%; height:10px; appearance:none; -webkit-appearance:none; border:1px solid var(--line); border-radius:999px; overflow:hidden; background:var(--bg); }
progress.meter::-webkit-progress-bar { background:var(--bg); } progress.meter::-webkit-progress-value { background:var(--accent); } progress.meter::-moz-progress-bar { background:var(--accent); }
.big { font-size:2rem; font-weight:700; letter-spacing:-.02em; }
svg.chart { width:100%; height:auto; display:block; }
svg.chart rect.bar { fill:var(--accent); } svg.chart text { fill:var(--muted); font-size:10px; font-family:system-ui,sans-serif; }
.grid { display:grid; gap:1rem; grid-template-columns:repeat(auto-fit,minmax(260px,1fr)); }
textarea { width:100%; padding:.6rem .7rem; border:1px solid var(--line); border-radius:8px; font:inherit; font-size:.9rem; background:#fff; resize:vertical; }
input[type=number] { width:100%; padding:.6rem .7rem; border:1px solid var(--line); border-radius:8px; font:inherit; background:#fff; }
fieldset.group { border:1px solid var(--line); border-radius:8px; padding:.25rem .9rem .9rem; margin:0; }
fieldset.group legend { font-weight:600; padding:0 .35rem; }
.switch { display:flex; gap:.5rem; align-items:flex-start; margin:.6rem 0 0; }
.switch input { margin-top:.3rem; } .switch label { margin:0; font-weight:400; }
label .muted { display:block; font-weight:400; }
.playground { display:grid; gap:1rem; grid-template-columns:minmax(0,5fr) minmax(0,6fr); align-items:start; }
.playground > .card { margin:0; }
img.shot, video.shot { max-width:100%; height:auto; border:1px solid var(--line); border-radius:8px; display:block; }
h3 { font-size:.95rem; margin:0; flex:1; }
#result[aria-busy="true"] { opacity:.6; }
/* The Render button stays where the user is: at the bottom of the form as it scrolls; on wide screens the result stays beside it. */
.playground .render-actions { position:sticky; bottom:0; z-index:1; background:var(--card); margin:.75rem -1.25rem -1.25rem; padding:.75rem 1.25rem; border-top:1px solid var(--line); border-radius:0 0 var(--radius) var(--radius); }
#render-state.failed { color:var(--bad); font-weight:600; }
.filters a[aria-current="page"] { background:var(--accent); color:var(--accent-ink); }
@media (min-width:861px) { .playground > #result { position:sticky; top:1rem; max-height:calc(100vh - 2rem); overflow:auto; } }
@media (max-width:860px) { .playground { grid-template-columns:1fr; } }
@media (max-width:600px) { .hide-small { display:none; } nav.tabs { flex-wrap:wrap; } main { padding:1rem .75rem 2rem; } .card { padding:1rem; } th, td { padding:.45rem .25rem; }
  table { display:block; overflow-x:auto; } .playground .render-actions { margin:.75rem -1rem -1rem; padding:.75rem 1rem; } }
`;

/** Served at /dashboard/assets/copy.js: the dashboard's one script (in-page/script.ts), as the page runs it. */
export const copyScript = inPageSource(dashboardScript);
