// `make bench ARGS=image`: the production image's rows alone (bench/image.ts).

import { imageLines, measureImage } from './image.ts';

process.stdout.write(`${imageLines(await measureImage()).join('\n')}\n`);
