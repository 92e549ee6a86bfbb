// The CDK app: `npm run synth` (or `npx cdk deploy` with the aws-cdk CLI)
// runs this file. Deployment details come from CDK context
// (`-c workhorse:databaseSecretArn=…`), so the same file synthesises offline
// and deploys anywhere.
import { App } from 'aws-cdk-lib';
import { WorkhorseExampleStack, type WorkhorseExampleStackProps } from './exampleStack.js';

const app = new App({ outdir: process.env.CDK_OUTDIR ?? 'cdk.out' });
const ctx = (key: string): string | undefined => {
  const v: unknown = app.node.tryGetContext(`workhorse:${key}`);
  return v === undefined || v === null || v === '' ? undefined : String(v);
};
const port = ctx('databasePort');

const stackName = ctx('stackName') ?? 'WorkhorseExample';
const stack = new WorkhorseExampleStack(app, stackName, {
  description: 'workhorse: serverless tick worker, HTTP trigger and deploy-time migration',
  databaseSecretArn: ctx('databaseSecretArn'),
  databaseSecretName: ctx('databaseSecretName'),
  runtimeDatabaseSecretArn: ctx('runtimeDatabaseSecretArn'),
  runtimeDatabaseSecretName: ctx('runtimeDatabaseSecretName'),
  databaseSecretShape: ctx('databaseSecretShape') as WorkhorseExampleStackProps['databaseSecretShape'],
  databaseHost: ctx('databaseHost'),
  databasePort: port === undefined ? undefined : Number(port),
  databaseName: ctx('databaseName'),
  alarmTopicArn: ctx('alarmTopicArn'),
});

const assembly = app.synth();
if (!process.env.CDK_OUTDIR) {
  const artifact = assembly.getStackByName(stack.stackName);
  const resources = Object.keys((artifact.template as { Resources: object }).Resources).length;
  console.log(`synthesised ${stack.stackName}: ${resources} resources -> ${artifact.templateFullPath}`);
}
