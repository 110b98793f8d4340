// The page frame every dashboard page shares: header, navigation, workspace switcher, notices.
import { html, type Html } from './html.ts';

/** A message shown above a page's content. */
export interface Notice {
  kind: 'ok' | 'warn' | 'bad';
  text: string | Html;
}

/** Who is looking, for the header; absent on the signed-out pages. */
export interface Viewer {
  email: string;
  workspaceId: string;
  workspaceIds: string[];
  csrf: string;
}

/** The hidden CSRF field every form carries. */
export const csrfField = (csrf: string) => html`<input type="hidden" name="_csrf" value="${csrf}">`;

/** The workspace's pages in the order of a first visit, then its settings, the account's own last. */
const tabs = [
  ['keys', 'Keys'],
  ['playground', 'Playground'],
  ['renders', 'Renders'],
  ['usage', 'Usage'],
  ['monitors', 'Monitors'],
  ['deliveries', 'Deliveries'],
  ['storage', 'Storage'],
  ['profiles', 'Profiles'],
  ['members', 'Members'],
  ['account', 'Account'],
] as const;

/** A whole HTML document. */
export function layout(options: {
  title: string;
  viewer?: Viewer;
  active?: string;
  notices?: Notice[];
  narrow?: boolean;
  body: Html;
}): Html {
  const { title, viewer, active, notices = [], narrow, body } = options;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Shutterbus</title>
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
<link rel="stylesheet" href="/dashboard/assets/style.css">
</head>
<body>
<header class="top"><div class="bar">
  <a class="brand" href="/dashboard">Shutter<span>bus</span></a>
  ${
    viewer
      ? html`<div class="who">
    ${
      viewer.workspaceIds.length > 1
        ? html`<form class="row" method="post" action="/dashboard/switch">${csrfField(viewer.csrf)}
        <select name="workspace_id" aria-label="Workspace">${viewer.workspaceIds.map((id) => html`<option value="${id}"${id === viewer.workspaceId ? html` selected` : ''}>${id}</option>`)}</select>
        <button class="secondary copy" type="submit">Switch</button></form>`
        : html`<span class="mono">${viewer.workspaceId}</span>`
    }
    <span class="hide-small">${viewer.email}</span>
    <form class="inline" method="post" action="/dashboard/sign-out">${csrfField(viewer.csrf)}<button class="link" type="submit">Sign out</button></form>
  </div>`
      : ''
  }
  <nav class="tabs">${viewer ? tabs.map(([path, label]) => html`<a href="/dashboard/${path}"${active === path ? html` aria-current="page"` : ''}>${label}</a>`) : ''}<a href="/docs">API reference</a></nav>
</div></header>
<main${narrow ? html` class="narrow"` : ''}>
${notices.map((notice) => html`<div class="notice ${notice.kind}" role="status">${notice.text}</div>`)}
${body}
</main>
<script src="/dashboard/assets/copy.js" defer></script>
</body>
</html>`;
}
