// copies the non-code files that src/ reads at run time (tool descriptions) into dist/, beside their compiled modules
import { cpSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const copy = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) copy(path);
    else if (name.endsWith('.txt')) cpSync(path, join('dist', relative('src', path)));
  }
};
copy('src');
