// `make bench ARGS=pdf`: the PDF rows alone (bench/pdf.ts) on a stack of their own: a plain PDF, a
// PDF/A-2b and a 10-source merge of the heavy page, side by side.

import os from 'node:os';
import { measurePdfs, pdfLines } from './pdf.ts';
import { startBenchSite } from './site.ts';
import { startBenchStack } from './stack.ts';

const site = await startBenchSite();
const stack = await startBenchStack(site);
try {
  const pdfs = await measurePdfs(stack, site.heavy);
  process.stdout.write(`PDFs, ${os.cpus().length} CPUs, ${new Date().toISOString()}\n\n${pdfLines(pdfs).join('\n')}\n`);
} finally {
  await stack.stop();
  await site.close();
}
