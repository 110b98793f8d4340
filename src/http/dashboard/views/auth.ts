// The signed-out pages: sign up, sign in, choose a password (invitations), and plain messages.
import { html, type Html } from './html.ts';
import { csrfField, layout, type Notice } from './layout.ts';

/** The sign-up or sign-in form. */
export function credentialsPage(options: {
  mode: 'sign-up' | 'sign-in';
  csrf: string;
  email?: string;
  notices?: Notice[];
}): Html {
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

/** The page an invitation link (`accept`) or a password link (`password`) opens: choose a password. */
export function choosePasswordPage(options: {
  csrf: string;
  email: string;
  token: string;
  action?: 'accept' | 'password';
  notices?: Notice[];
}): Html {
  const invitation = (options.action ?? 'accept') === 'accept';
  return layout({
    title: 'Choose a password',
    narrow: true,
    notices: options.notices,
    body: html`<div class="card">
  <h1>${invitation ? 'Join your team on Shutterbus' : 'Choose a new password'}</h1>
  <p class="muted small">Choose a password for <strong>${options.email}</strong>. This also confirms your email address and signs out every other session of the account.</p>
  ${invitation ? html`<p class="muted small">Have an account here and want to keep its password? <a href="/dashboard/sign-in">Sign in</a> first, then open the invitation link again.</p>` : ''}
  <form method="post" action="/dashboard/${invitation ? 'accept' : 'password'}">${csrfField(options.csrf)}
    <input type="hidden" name="token" value="${options.token}">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="10">
    <p class="muted small">At least 10 characters.</p>
    <p><button type="submit">${invitation ? 'Join' : 'Save the password'}</button></p>
  </form>
</div>`,
  });
}

/**
 * What an account whose address is not confirmed yet sees instead of any workspace (docs/security.md).
 * `mailed`: SMTP_URL is set; otherwise the link is in the outbox.
 */
export function confirmAddressPage(options: {
  csrf: string;
  email: string;
  mailed: boolean;
  notices?: Notice[];
}): Html {
  const resend = (label: string) =>
    html`<form class="inline" method="post" action="/dashboard/verify/resend">${csrfField(options.csrf)}<button class="link" type="submit">${label}</button></form>`;
  return layout({
    title: 'Confirm your address',
    narrow: true,
    notices: options.notices,
    body: html`<div class="card stack">
  <h1>Confirm your address</h1>
  <div class="notice warn"><strong>This account opens no workspace until its address is confirmed.</strong>
    ${
      options.mailed
        ? html`We sent a link to <strong>${options.email}</strong>; open it to continue. ${resend('Send the link again')}`
        : html`No mail is sent from this installation (<code>SMTP_URL</code> is not set): the link for <strong>${options.email}</strong> is in <code>npx shutterbus mail outbox</code>; open it to continue. ${resend('Make a new link')}`
    }</div>
  <form class="inline" method="post" action="/dashboard/sign-out">${csrfField(options.csrf)}<button class="secondary" type="submit">Sign out</button></form>
</div>`,
  });
}

/** The one answer to every accepted sign-up, whoever owns the address: the mail says the rest. `mailed`: SMTP_URL is set. */
export function checkMailPage(email: string, mailed = true): Html {
  return messagePage({
    title: 'Check your mail',
    text: mailed
      ? html`We sent a mail to <strong>${email}</strong>. Follow its link to confirm the address, then sign in. If the address has an account already, the mail says how to sign in.`
      : html`No mail is sent from this installation (<code>SMTP_URL</code> is not set): the mail to <strong>${email}</strong> is in the outbox, where <code>npx shutterbus mail outbox</code> shows it. Follow its link to confirm the address, then sign in.`,
    link: { href: '/dashboard/sign-in', label: 'Sign in' },
  });
}

/** A short page with one message and a way on. */
export function messagePage(options: {
  title: string;
  text: string | Html;
  link?: { href: string; label: string };
  kind?: Notice['kind'];
}): Html {
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
