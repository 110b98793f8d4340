// The keys page: both keys, a signed example, the "require signed requests" setting and key rotation.
import type { Member, Workspace } from '../../../workspaces/workspace.ts';
import { html, type Html } from './html.ts';
import { csrfField, layout, type Notice, type Viewer } from './layout.ts';

/** Everything the keys page shows. */
export interface KeysView {
  viewer: Viewer;
  workspace: Workspace;
  member: Member;
  manager: boolean;
  revealSecret: boolean;
  /** Set when the keys answer email_not_verified: whether this viewer can fix it by verifying. */
  unverified?: { viewerVerified: boolean };
  /** False when this installation sends no mail (no SMTP_URL): links wait in `npx shutterbus mail outbox`. */
  mailed?: boolean;
  signedUrl: string;
  notices: Notice[];
}

const copyButton = (target: string) =>
  html`<button class="secondary copy" type="button" data-copy="${target}" hidden>Copy</button>`;

/** The keys page. */
export function keysPage(view: KeysView): Html {
  const { viewer, workspace, manager, revealSecret, signedUrl } = view;
  const notices = [...view.notices];
  if (view.unverified) {
    notices.unshift({
      kind: 'warn',
      text: html`<strong>Your keys answer <code>403 email_not_verified</code> for now.</strong>
        This is a free workspace, and free workspaces work once at least one member has confirmed an email address. No one has yet.
        ${
          view.unverified.viewerVerified
            ? html`Ask a teammate to follow the link in their invitation.`
            : view.mailed === false
              ? html`No mail is sent from this installation (<code>SMTP_URL</code> is not set): the link for <strong>${viewer.email}</strong> is in <code>npx shutterbus mail outbox</code>; open it and your keys work at once.
            <form class="inline" method="post" action="/dashboard/verify/resend">${csrfField(viewer.csrf)}<button class="link" type="submit">Make a new link</button></form>`
              : html`We sent a link to <strong>${viewer.email}</strong>; open it and your keys work at once.
            <form class="inline" method="post" action="/dashboard/verify/resend">${csrfField(viewer.csrf)}<button class="link" type="submit">Send the link again</button></form>`
        }`,
    });
  }
  const notManager = html`<p class="muted small">Only owners and admins can change this; you are a <strong>${view.member.role}</strong> of this workspace.</p>`;
  return layout({
    title: 'Keys',
    viewer,
    active: 'keys',
    notices,
    body: html`<h1>API keys</h1>
<section class="card stack" aria-labelledby="keys-title">
  <h2 id="keys-title">Your key pair</h2>
  <div>
    <label>Access key <span class="muted small">(identifies the workspace; keep it on your server)</span></label>
    <div class="key"><code id="access-key">${workspace.access_key}</code>${copyButton('access-key')}</div>
  </div>
  <div>
    <label>Secret key <span class="muted small">(signs URLs and webhooks; never send it in a request)</span></label>
    ${
      revealSecret
        ? html`<div class="key"><code id="secret-key">${workspace.secret_key}</code>${copyButton('secret-key')}</div>
        <p class="small"><a href="/dashboard/keys">Hide the secret key</a></p>`
        : manager
          ? html`<div class="key"><code>sk_••••••••••••••••••••••••••••••••</code><a class="button secondary copy" href="/dashboard/keys?reveal=secret">Reveal</a></div>`
          : html`<div class="key"><code>sk_••••••••••••••••••••••••••••••••</code></div>
          <p class="muted small" id="secret-hidden">Only owners and admins can reveal the secret key; you are a <strong>${view.member.role}</strong> of this workspace.</p>`
    }
  </div>
</section>
<section class="card stack" aria-labelledby="example-title">
  <h2 id="example-title">Try it</h2>
  <p class="small muted">A signed URL for https://example.com, built from these keys. Signed URLs can go straight into an <code>&lt;img&gt;</code> tag and are cached.</p>
  <div class="key"><code id="signed-url">${signedUrl}</code>${copyButton('signed-url')}</div>
  <pre id="curl-line">curl -o shot.png '${signedUrl}'</pre>
  <div>${copyButton('curl-line')}</div>
</section>
<section class="card stack" aria-labelledby="setting-title">
  <h2 id="setting-title">Require signed requests</h2>
  <p>Currently <span class="pill ${workspace.require_signed_requests ? 'ok' : ''}" id="setting-state">${workspace.require_signed_requests ? 'On' : 'Off'}</span>
    ${
      workspace.require_signed_requests
        ? 'Requests without a signature are refused with 403 signature_is_required.'
        : 'Unsigned requests with a valid access key are accepted.'
    }</p>
  <p class="small muted">When it is on, a leaked access key can only replay URLs you already signed. A change reaches every server within about two seconds (at most one minute).</p>
  <form method="post" action="/dashboard/settings">${csrfField(viewer.csrf)}
    <input type="hidden" name="require_signed_requests" value="${workspace.require_signed_requests ? 'off' : 'on'}">
    <button type="submit" id="toggle-signed"${manager ? '' : html` disabled`}>${workspace.require_signed_requests ? 'Turn off' : 'Turn on'}</button>
  </form>
  ${manager ? '' : notManager}
</section>
<section class="card stack" aria-labelledby="rotate-title">
  <h2 id="rotate-title">Rotate keys</h2>
  <p class="small muted">Replaces both keys at once. The old ones stop working immediately, and URLs signed with the old secret stop working too.</p>
  ${manager ? html`<p><a class="button secondary" id="rotate-keys" href="/dashboard/keys/rotate">Rotate keys…</a></p>` : html`<p><button type="button" id="rotate-keys" disabled>Rotate keys…</button></p>${notManager}`}
</section>`,
  });
}

/** The confirmation step before a rotation. */
export function rotateConfirmPage(viewer: Viewer): Html {
  return layout({
    title: 'Rotate keys',
    viewer,
    active: 'keys',
    body: html`<div class="card stack">
  <h1>Rotate both keys?</h1>
  <p>Every server and signed URL that uses the current access key or secret key stops working the moment you confirm. You will see the new keys on the next page.</p>
  <form class="row" method="post" action="/dashboard/keys/rotate">${csrfField(viewer.csrf)}
    <input type="hidden" name="confirm" value="rotate">
    <button class="danger" type="submit" id="confirm-rotate">Yes, rotate the keys</button>
    <a class="button secondary" href="/dashboard/keys">Cancel</a>
  </form>
</div>`,
  });
}
