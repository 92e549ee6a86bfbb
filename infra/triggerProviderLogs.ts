// Log retention for the function CDK's triggers module creates: the
// stack-wide custom resource provider that invokes the migration trigger.
// It is a raw AWS::Lambda::Function, so it gets no log group of its own and
// Lambda would create /aws/lambda/<name> on first use, kept forever. This
// gives it a log group with a retention and points its logging config at
// it. The provider is one per stack, so the first WorkhorseTickWorker in a
// stack sets it up and later ones reuse it.
import { CfnResource, Stack } from 'aws-cdk-lib';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';

/** How the id CDK's Trigger gives its provider begins (aws-cdk-lib/triggers). */
const TRIGGER_PROVIDER_ID = 'AWSCDK.TriggerCustomResourceProvider';
const LOG_GROUP_ID = 'WorkhorseTriggerProviderLogs';

/** Call after the first TriggerFunction of the stack exists. Returns the log group, or undefined when no provider was found. */
export function retainTriggerProviderLogs(stack: Stack, retention: RetentionDays): LogGroup | undefined {
  const existing = stack.node.tryFindChild(LOG_GROUP_ID);
  if (existing instanceof LogGroup) return existing;
  const provider = stack.node.children.find((c) => c.node.id.startsWith(TRIGGER_PROVIDER_ID));
  const handler = provider?.node.tryFindChild('Handler');
  if (!(handler instanceof CfnResource) || handler.cfnResourceType !== 'AWS::Lambda::Function') return undefined;
  const logGroup = new LogGroup(stack, LOG_GROUP_ID, { retention });
  handler.addPropertyOverride('LoggingConfig', { LogGroup: logGroup.logGroupName });
  return logGroup;
}
