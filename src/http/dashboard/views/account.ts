// The account page: change the password, sign out every session.
import { html, type Html } from './html.ts';
import { csrfField, layout, type Notice, type Viewer } from './layout.ts';

/** The signed-in member's own account. */
export function accountPage(options: { viewer: Viewer; notices?: Notice[] }): Html {
  const { viewer } = options;
  return layout({
    title: 'Account',
    viewer,
    active: 'account',
    notices: options.notices,
    body: html`<h1>Your account</h1>
<section class="card stack" aria-labelledby="password-title">
  <h2 id="password-title">Change your password</h2>
  <p class="small muted">Every other session of ${viewer.email} is signed out; this one stays.</p>
  <form method="post" action="/dashboard/account/password">${csrfField(viewer.csrf)}
    <label for="current-password">Current password</label>
    <input id="current-password" name="current_password" type="password" autocomplete="current-password" required>
    <label for="new-password">New password</label>
    <input id="new-password" name="password" type="password" autocomplete="new-password" required minlength="10">
    <p><button type="submit" id="change-password">Change the password</button></p>
  </form>
</section>
<section class="card stack" aria-labelledby="sessions-title">
  <h2 id="sessions-title">Sign out everywhere</h2>
  <p class="small muted">Ends every session of your account, in every browser, this one included: a lost laptop or a copied cookie stops working at once.</p>
  <form method="post" action="/dashboard/account/sign-out-everywhere">${csrfField(viewer.csrf)}
    <button type="submit" class="secondary" id="sign-out-everywhere">Sign out everywhere</button>
  </form>
</section>`,
  });
}
