// every test process checks configs as a library caller's does: the package entry (src/index.ts) installs this check,
// and the tests import the modules beside it directly
import '../src/agent/BhrainConfigSchema.js';
