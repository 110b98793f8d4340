// The fontconfig configuration Chromium renders with (docs/capture.md, "Fonts"): the machine's own,
// plus the preferences that give a page's language its own face among the Noto CJK families.

import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';

// Han characters are drawn differently in Japan, Korea, mainland China and Taiwan / Hong Kong: a
// page that says its language gets that region's face for each generic family. Debian's
// fonts-noto-cjk says the same; here it holds on any machine whatever else is installed.
const CJK_FACES: Record<string, { 'sans-serif': string; serif: string; monospace: string }> = {
  ja: { 'sans-serif': 'Noto Sans CJK JP', serif: 'Noto Serif CJK JP', monospace: 'Noto Sans Mono CJK JP' },
  ko: { 'sans-serif': 'Noto Sans CJK KR', serif: 'Noto Serif CJK KR', monospace: 'Noto Sans Mono CJK KR' },
  'zh-cn': { 'sans-serif': 'Noto Sans CJK SC', serif: 'Noto Serif CJK SC', monospace: 'Noto Sans Mono CJK SC' },
  'zh-sg': { 'sans-serif': 'Noto Sans CJK SC', serif: 'Noto Serif CJK SC', monospace: 'Noto Sans Mono CJK SC' },
  'zh-tw': { 'sans-serif': 'Noto Sans CJK TC', serif: 'Noto Serif CJK TC', monospace: 'Noto Sans Mono CJK TC' },
  'zh-hk': { 'sans-serif': 'Noto Sans CJK HK', serif: 'Noto Serif CJK TC', monospace: 'Noto Sans Mono CJK HK' },
  'zh-mo': { 'sans-serif': 'Noto Sans CJK HK', serif: 'Noto Serif CJK TC', monospace: 'Noto Sans Mono CJK HK' },
};

/**
 * The generic families of the CJK scripts, as Chrome's own defaults give them on Linux
 * (webkit.webprefs.fonts.*.Jpan, Hang, Hans, Hant: its first installed Noto face, a fixed face for
 * Japanese only). Blink takes a generic family's face from these by the text's language before
 * fontconfig is asked, by name without the language. The headless shell (content, not chrome/) has
 * none: every language gets Arial / Times New Roman, with the Han from fallback on that font's line.
 * The pool sets them on each page it opens (Page.setFontFamilies), so both browsers draw the same.
 */
export const SCRIPT_FONT_FAMILIES = [
  {
    script: 'Jpan',
    fontFamilies: {
      standard: 'Noto Sans CJK JP',
      sansSerif: 'Noto Sans CJK JP',
      serif: 'Noto Serif CJK JP',
      fixed: 'Noto Sans Mono CJK JP',
    },
  },
  {
    script: 'Hang',
    fontFamilies: { standard: 'Noto Sans CJK KR', sansSerif: 'Noto Sans CJK KR', serif: 'Noto Serif CJK KR' },
  },
  {
    script: 'Hans',
    fontFamilies: { standard: 'Noto Sans CJK SC', sansSerif: 'Noto Sans CJK SC', serif: 'Noto Serif CJK SC' },
  },
  {
    script: 'Hant',
    fontFamilies: { standard: 'Noto Sans CJK TC', sansSerif: 'Noto Sans CJK TC', serif: 'Noto Serif CJK TC' },
  },
];

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** The fontconfig file: the system configuration first, then the language preferences. */
export function fontconfigXml(systemConfig = '/etc/fonts/fonts.conf'): string {
  const rules = Object.entries(CJK_FACES).flatMap(([lang, faces]) =>
    Object.entries(faces).map(
      ([generic, face]) => `  <match target="pattern">
    <test name="lang"><string>${lang}</string></test>
    <test name="family"><string>${generic}</string></test>
    <edit name="family" mode="prepend" binding="strong"><string>${escapeXml(face)}</string></edit>
  </match>`,
    ),
  );
  return `<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">${escapeXml(systemConfig)}</include>
${rules.join('\n')}
</fontconfig>
`;
}

let written: string | undefined;

/**
 * The path of the fontconfig file for the browser's FONTCONFIG_FILE, written once per process into
 * a directory of this user's that nobody else can write to (its name carries the content's hash,
 * so a new version is a new file); undefined when it cannot be written there, and the browser
 * then uses the machine's configuration alone.
 */
export function fontconfigFile(): string | undefined {
  if (written) return written;
  const xml = fontconfigXml();
  const directory = path.join(os.tmpdir(), `shutterbus-fonts-${process.getuid?.() ?? 'user'}`);
  const file = path.join(directory, `fonts-${createHash('sha256').update(xml).digest('hex').slice(0, 12)}.conf`);
  try {
    // Readable by all (the browser may run as another, unprivileged user), writable by this user alone.
    mkdirSync(directory, { recursive: true, mode: 0o755 });
    // Another local user must not be able to plant a configuration in a shared temporary directory.
    const stat = statSync(directory);
    if (!stat.isDirectory() || stat.uid !== process.getuid?.() || (stat.mode & 0o022) !== 0) return undefined;
    if (!existsSync(file) || readFileSync(file, 'utf8') !== xml) {
      const temporary = `${file}.${process.pid}.tmp`;
      writeFileSync(temporary, xml, { mode: 0o644 });
      renameSync(temporary, file);
    }
  } catch {
    return undefined;
  }
  written = file;
  return file;
}
