#!/usr/bin/env node
// The `shutterbus` operator CLI: loads the TypeScript sources through tsx, no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
