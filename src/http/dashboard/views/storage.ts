// The storage page: the workspace's default storage for store=true (docs/storage.md), its
// connection test, and clearing it. The secret is never shown, not even to owners.
import type { PublicStorage } from '../../../workspaces/storage.ts';
import { html, type Html } from './html.ts';
import { csrfField, layout, type Notice, type Viewer } from './layout.ts';

/** Everything the storage page shows. */
export interface StorageView {
  viewer: Viewer;
  storage: PublicStorage | null;
  manager: boolean;
  role: string;
  notices: Notice[];
}

/** The storage page. */
export function storagePage(view: StorageView): Html {
  const { viewer, storage, manager } = view;
  const disabled = manager ? '' : html` disabled`;
  return layout({
    title: 'Storage',
    viewer,
    active: 'storage',
    notices: view.notices,
    body: html`<h1>Your storage</h1>
<section class="card stack" aria-labelledby="current-title">
  <h2 id="current-title">Default storage</h2>
  <p class="small muted">With <code>store=true</code> and a <code>storage_path</code>, renders also go to this S3-compatible bucket; a request's own <code>storage_*</code> parameters override it.</p>
  ${
    storage
      ? html`<dl class="small" id="storage-current">
      <dt>Endpoint</dt><dd class="mono">${storage.endpoint}</dd>
      <dt>Bucket</dt><dd class="mono">${storage.bucket}</dd>
      <dt>Region</dt><dd class="mono">${storage.region}</dd>
      <dt>Access key id</dt><dd class="mono">${storage.access_key_id}</dd>
      <dt>Secret access key</dt><dd class="mono">•••••••• (kept sealed; never shown)</dd>
    </dl>
    <div class="row">
      <form method="post" action="/dashboard/storage/test">${csrfField(viewer.csrf)}<button type="submit" id="test-storage"${disabled}>Test the connection</button></form>
      <form method="post" action="/dashboard/storage/clear">${csrfField(viewer.csrf)}<button class="secondary" type="submit" id="clear-storage"${disabled}>Clear</button></form>
    </div>
    <p class="small muted">The test writes a small object and deletes it again.</p>`
      : html`<p id="storage-current">None yet: <code>store=true</code> needs the <code>storage_*</code> parameters in each request.</p>`
  }
</section>
<section class="card stack" aria-labelledby="set-title">
  <h2 id="set-title">${storage ? 'Replace it' : 'Set it'}</h2>
  <form class="stack" method="post" action="/dashboard/storage">${csrfField(viewer.csrf)}
    <div><label for="storage-endpoint">Endpoint</label><input id="storage-endpoint" name="endpoint" type="url" placeholder="https://s3.eu-west-1.amazonaws.com" required${disabled}></div>
    <div><label for="storage-bucket">Bucket</label><input id="storage-bucket" name="bucket" required${disabled}></div>
    <div><label for="storage-region">Region <span class="muted small">(optional; read from an AWS endpoint, else us-east-1)</span></label><input id="storage-region" name="region"${disabled}></div>
    <div><label for="storage-key-id">Access key id</label><input id="storage-key-id" name="access_key_id" autocomplete="off" required${disabled}></div>
    <div><label for="storage-secret">Secret access key</label><input id="storage-secret" name="secret_access_key" type="password" autocomplete="off" required${disabled}></div>
    <div><button type="submit" id="save-storage"${disabled}>Save</button></div>
  </form>
  ${manager ? '' : html`<p class="muted small">Only owners and admins can change this; you are a <strong>${view.role}</strong> of this workspace.</p>`}
</section>`,
  });
}
