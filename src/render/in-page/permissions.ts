// In every document of a page's context under the headless shell (asChromeShows, src/render/browser/pool.ts).

/**
 * Makes Notification.permission read "default", as Chromium reads a notification permission held at
 * "prompt" (pool.ts holds every permission there): the headless shell has no notification service,
 * and its browser answers "denied" whatever the permission (Notification.requestPermission and the
 * Permissions API still follow it). Insecure contexts and cross-origin frames keep "denied", as in
 * Chromium.
 */
export function notificationsAtPrompt(): void {
  if (typeof Notification === 'undefined' || !isSecureContext) return;
  try {
    void window.top?.location.href;
  } catch {
    return;
  }
  const descriptor = Object.getOwnPropertyDescriptor(
    {
      get permission(): NotificationPermission {
        return 'default';
      },
    },
    'permission',
  );
  if (descriptor) Object.defineProperty(Notification, 'permission', { ...descriptor, enumerable: true });
}
