// The locale and time zone a page is emulated in, as the browser takes them.

/**
 * The IANA name of `zone` as the browser takes it (`asia/tokyo` is `Asia/Tokyo`: the runtime
 * matches zones ignoring case, Chromium does not), or undefined for an unknown zone. An offset
 * (`+05:00`) is a time zone to the runtime but not to Chromium, which refuses it mid-render:
 * unknown here (`Etc/GMT-5` names the same offset).
 */
export function canonicalTimeZone(zone: string): string | undefined {
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
  return /^[+-]/.test(resolved) ? undefined : resolved;
}

/**
 * The locale an Accept-Language value asks for first (`de-DE,de;q=0.9` → `de-DE`), and every tag
 * of it in order of preference; undefined when it names none.
 */
export function localeOf(acceptLanguage: string): { locale: string; languages: string[] } | undefined {
  const ranked = acceptLanguage
    .split(',')
    .map((part, index) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((param) => /^\s*q=([\d.]+)\s*$/.exec(param)).find(Boolean);
      return { tag: tag.trim(), q: q ? Number(q[1]) : 1, index };
    })
    .filter(({ tag, q }) => tag !== '' && tag !== '*' && q > 0);
  const languages: string[] = [];
  for (const { tag } of ranked.sort((a, b) => b.q - a.q || a.index - b.index)) {
    try {
      languages.push(Intl.getCanonicalLocales(tag)[0]);
    } catch {
      return undefined;
    }
  }
  return languages.length > 0 ? { locale: languages[0], languages } : undefined;
}
