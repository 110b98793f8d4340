// The profiles page: the workspace's named browser states (docs/profiles.md), added from a
// Playwright storage state and removed by owners and admins. A profile's state is never shown.
import type { ProfileRecord } from '../../../domain/profile.ts';
import { html, type Html } from './html.ts';
import { csrfField, layout, type Notice, type Viewer } from './layout.ts';

/** Everything the profiles page shows. */
export interface ProfilesView {
  viewer: Viewer;
  profiles: ProfileRecord[];
  manager: boolean;
  role: string;
  notices: Notice[];
}

/** The profiles page. */
export function profilesPage(view: ProfilesView): Html {
  const { viewer, profiles, manager } = view;
  const disabled = manager ? '' : html` disabled`;
  const rows = profiles.map(
    (
      profile,
    ) => html`<tr><td class="mono">${profile.name}</td><td class="small">${profile.origins.join(', ')}</td><td class="small">${profile.created_at}</td>
  <td><form method="post" action="/dashboard/profiles/${profile.name}/delete">${csrfField(viewer.csrf)}<button class="secondary" type="submit"${disabled}>Remove</button></form></td></tr>`,
  );
  return layout({
    title: 'Profiles',
    viewer,
    active: 'profiles',
    notices: view.notices,
    body: html`<h1>Profiles</h1>
<section class="card stack" aria-labelledby="list-title">
  <h2 id="list-title">This workspace's profiles</h2>
  <p class="small muted">A render with <code>profile=NAME</code> loads that profile's cookies and local storage for its own sites: a page behind a login is captured signed in. <code>save_profile=NAME</code> on a render keeps the state it ends with. What a profile holds is sealed and never shown again.</p>
  ${
    profiles.length === 0
      ? html`<p id="profiles-none">None yet.</p>`
      : html`<table id="profiles"><thead><tr><th>Name</th><th>Sites</th><th>Created</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
  }
</section>
<section class="card stack" aria-labelledby="add-title">
  <h2 id="add-title">Add one</h2>
  <form class="stack" method="post" action="/dashboard/profiles">${csrfField(viewer.csrf)}
    <div><label for="profile-name">Name <span class="muted small">(letters, digits, _ and -; one of the same name is replaced)</span></label><input id="profile-name" name="name" required pattern="[A-Za-z0-9_\\-]{1,64}"${disabled}></div>
    <div><label for="profile-state">Storage state <span class="muted small">(Playwright's <code>context.storageState()</code> as JSON)</span></label><textarea id="profile-state" name="storage_state" rows="8" class="mono" autocomplete="off" required${disabled}></textarea></div>
    <div><button type="submit" id="save-profile"${disabled}>Save</button></div>
  </form>
  ${manager ? '' : html`<p class="muted small">Only owners and admins can change profiles; you are a <strong>${view.role}</strong> of this workspace.</p>`}
</section>`,
  });
}
