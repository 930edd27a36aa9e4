import type { GithubRun } from '../github/genGithubRun.js';
import type { RunSink } from './RunSink.js';

/** .what = GitHub Actions' output (docs/ci.md): the group closed, the annotations and the job summary, at the run's end */
export const genGithubSink = (github: GithubRun): RunSink => ({ name: 'GitHub output', onEnd: (end) => github.end(end) });
