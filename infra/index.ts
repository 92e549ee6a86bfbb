// The CDK side of workhorse: what a user's own CDK app imports.
export { WorkhorseTickWorker, WORKHORSE_RUNTIME } from './WorkhorseTickWorker.js';
export {
  tickWorkerPropsSchema,
  parseTickWorkerProps,
  MAX_LAMBDA_TIMEOUT_SECONDS,
  type WorkhorseTickWorkerProps,
  type ResolvedTickWorkerProps,
} from './workhorseTickWorkerProps.js';
export { WorkhorseAlarms, readyBacklogMetric } from './workhorseAlarms.js';
export { bundleLambdaEntry, lambdaCodeFromEntry } from './lambdaBundle.js';
