// playwright-core's values, loaded with require: the package is one large CommonJS bundle, and
// importing it from ESM makes Node scan the whole file for export names first (≈ 0.2 s of every
// start). Types still come from `import type ... from 'playwright-core'`.
import { createRequire } from 'node:module';
import type * as PlaywrightCore from 'playwright-core';

export const { chromium, errors } = createRequire(import.meta.url)('playwright-core') as typeof PlaywrightCore;
