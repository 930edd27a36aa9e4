// every test process checks configs as a library caller's does: the package entry (src/index.ts) gives configureBhrain
// this check, and the tests import the modules beside it directly
import { setBhrainConfigValidator } from '../src/agent/config/configureBhrain.js';
import { validateBhrainConfig } from '../src/agent/config/BhrainConfigSchema.js';

setBhrainConfigValidator(validateBhrainConfig);
