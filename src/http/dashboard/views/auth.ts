// The signed-out pages: sign up, sign in, choose a password (invitations), and plain messages.
import { html, type Html } from './html.ts';
import { csrfField, layout, type Notice } from './layout.ts';

/** The sign-up or sign-in form. */
export function credentialsPage(options: { mode: 'sign-up' | 'sign-in'; csrf: string; email?: string; notices?: Notice[] }): Html {
  const signUp = options.mode === 'sign-up';
  return layout({
    title: signUp ? 'Create your account' : 'Sign in',
    narrow: true,
    notices: options.notices,
    body: html`<div class="card">
  <h1>${signUp ? 'Create your account' : 'Sign in'}</h1>
  <p class="muted small">${signUp ? 'You get a free workspace with 100 screenshots a month and its own keys.' : 'Welcome back.'}</p>
  <form method="post" action="/dashboard/${options.mode}">${csrfField(options.csrf)}
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="email" required value="${options.email ?? ''}">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="${signUp ? 'new-password' : 'current-password'}" required minlength="${signUp ? 10 : 1}">
    ${signUp ? html`<p class="muted small">At least 10 characters.</p>` : ''}
    <p><button type="submit">${signUp ? 'Create account' : 'Sign in'}</button></p>
  </form>
  <p class="small">${signUp ? html`Already have an account? <a href="/dashboard/sign-in">Sign in</a>` : html`New here? <a href="/dashboard/sign-up">Create an account</a>`}</p>
</div>`,
  });
}

/** The page an invitation link opens: choose a password to join. */
export function choosePasswordPage(options: { csrf: string; email: string; token: string; notices?: Notice[] }): Html {
  return layout({
    title: 'Choose a password',
    narrow: true,
    notices: options.notices,
    body: html`<div class="card">
  <h1>Join your team on Shutterbus</h1>
  <p class="muted small">Choose a password for <strong>${options.email}</strong>. This also confirms your email address.</p>
  <form method="post" action="/dashboard/accept">${csrfField(options.csrf)}
    <input type="hidden" name="token" value="${options.token}">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="10">
    <p class="muted small">At least 10 characters.</p>
    <p><button type="submit">Join</button></p>
  </form>
</div>`,
  });
}

/** A short page with one message and a way on. */
export function messagePage(options: { title: string; text: string | Html; link?: { href: string; label: string }; kind?: Notice['kind'] }): Html {
  return layout({
    title: options.title,
    narrow: true,
    body: html`<div class="card stack">
  <h1>${options.title}</h1>
  <div class="notice ${options.kind ?? 'ok'}">${options.text}</div>
  ${options.link ? html`<p><a class="button" href="${options.link.href}">${options.link.label}</a></p>` : ''}
</div>`,
  });
}
