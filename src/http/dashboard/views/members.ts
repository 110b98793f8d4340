// The members page: who belongs to the workspace, invitations, roles and removal.
import type { Member, Role, Workspace } from '../../../workspaces/workspace.ts';
import { html, type Html } from './html.ts';
import { csrfField, layout, type Notice, type Viewer } from './layout.ts';

const roles: Role[] = ['owner', 'admin', 'member'];

/** The members page. */
export function membersPage(view: { viewer: Viewer; workspace: Workspace; member: Member; notices: Notice[] }): Html {
  const { viewer, workspace, member } = view;
  const owner = member.role === 'owner';
  const manager = owner || member.role === 'admin';
  const owners = workspace.members.filter((m) => m.role === 'owner').length;
  const row = (m: Member) => {
    const lastOwner = m.role === 'owner' && owners === 1;
    return html`<tr>
  <td>${m.email}${m.email === viewer.email ? html` <span class="muted small">(you)</span>` : ''}</td>
  <td>${
    owner && !lastOwner
      ? html`<form class="row" method="post" action="/dashboard/members/role">${csrfField(viewer.csrf)}
        <input type="hidden" name="email" value="${m.email}">
        <select name="role" aria-label="Role of ${m.email}">${roles.map((r) => html`<option value="${r}"${r === m.role ? html` selected` : ''}>${r}</option>`)}</select>
        <button class="secondary copy" type="submit">Change</button></form>`
      : html`${m.role}${lastOwner ? html` <span class="muted small">(last owner)</span>` : ''}`
  }</td>
  <td>${m.verified ? html`<span class="pill ok">verified</span>` : html`<span class="pill warn">not verified</span>`}</td>
  <td>${
    owner && !lastOwner
      ? html`<form class="inline" method="post" action="/dashboard/members/remove">${csrfField(viewer.csrf)}<input type="hidden" name="email" value="${m.email}"><button class="link" type="submit">Remove</button></form>`
      : ''
  }</td>
</tr>`;
  };
  return layout({
    title: 'Members',
    viewer,
    active: 'members',
    notices: view.notices,
    body: html`<h1>Members</h1>
<section class="card">
  <table>
    <thead><tr><th>Email</th><th>Role</th><th>Email address</th><th><span class="hide-small">Actions</span></th></tr></thead>
    <tbody>${workspace.members.map(row)}</tbody>
  </table>
  <p class="small muted">Owners and admins change settings and rotate keys. Only owners change roles and remove members; a workspace always keeps at least one owner.</p>
</section>
<section class="card">
  <h2>Invite someone</h2>
  ${
    manager
      ? html`<form method="post" action="/dashboard/members/invite">${csrfField(viewer.csrf)}
    <div class="grid">
      <div><label for="invite-email">Email</label><input id="invite-email" name="email" type="email" required></div>
      <div><label for="invite-role">Role</label><select id="invite-role" name="role">${roles
        .filter((r) => owner || r !== 'owner')
        .map((r) => html`<option value="${r}"${r === 'member' ? html` selected` : ''}>${r}</option>`)}</select></div>
    </div>
    <p><button type="submit">Send invitation</button></p>
    <p class="small muted">They get an email with a link to choose a password, which also confirms their address.</p>
  </form>`
      : html`<p class="muted small">Only owners and admins can invite; you are a <strong>${member.role}</strong>.</p>`
  }
</section>`,
  });
}
