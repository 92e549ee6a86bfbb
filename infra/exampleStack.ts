// The example stack: one WorkhorseTickWorker deploying examples/app.ts
// against an existing PostgreSQL (RDS, Aurora or anything reachable) with
// two credentials in Secrets Manager: the owner's, which only the
// migration uses, and the runtime login's (a member of workhorse_runtime),
// which the tick and HTTP functions use. Environment-agnostic, so it
// synthesises offline with no credentials; everything deployment-specific
// arrives as props (infra/app.ts reads them from CDK context).
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { Secret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { WorkhorseTickWorker } from './WorkhorseTickWorker.js';

export const EXAMPLE_APP_MODULE = resolve(dirname(fileURLToPath(import.meta.url)), '../examples/app.ts');

export interface WorkhorseExampleStackProps extends StackProps {
  /** Complete ARN of the owner's database secret (migrations); wins over `databaseSecretName`. */
  databaseSecretArn?: string;
  /** Name of the owner's database secret. Default "workhorse/database". */
  databaseSecretName?: string;
  /** Complete ARN of the runtime login's secret (tick and HTTP); wins over `runtimeDatabaseSecretName`. */
  runtimeDatabaseSecretArn?: string;
  /** Name of the runtime login's secret. Default "workhorse/database-runtime". */
  runtimeDatabaseSecretName?: string;
  /** How both secrets hold the connection (see WorkhorseTickWorker's database prop). Default "url". */
  databaseSecretShape?: 'url' | 'rds' | 'json';
  /** For an RDS-managed secret that holds only credentials. */
  databaseHost?: string;
  databasePort?: number;
  databaseName?: string;
  /** An existing SNS topic for the alarms. */
  alarmTopicArn?: string;
  /** The app module to deploy. Default examples/app.ts. */
  appModule?: string;
}

export class WorkhorseExampleStack extends Stack {
  readonly worker: WorkhorseTickWorker;

  constructor(scope: Construct, id: string, props: WorkhorseExampleStackProps = {}) {
    super(scope, id, props);
    const secret = (id: string, arn: string | undefined, name: string): ISecret =>
      arn ? Secret.fromSecretCompleteArn(this, id, arn) : Secret.fromSecretNameV2(this, id, name);
    const database = (s: ISecret) => ({
      secret: s,
      shape: props.databaseSecretShape ?? 'url',
      host: props.databaseHost,
      port: props.databasePort,
      databaseName: props.databaseName,
    });

    this.worker = new WorkhorseTickWorker(this, 'Workhorse', {
      app: props.appModule ?? EXAMPLE_APP_MODULE,
      database: database(secret('DatabaseSecret', props.databaseSecretArn, props.databaseSecretName ?? 'workhorse/database')),
      runtimeDatabase: database(
        secret('RuntimeDatabaseSecret', props.runtimeDatabaseSecretArn, props.runtimeDatabaseSecretName ?? 'workhorse/database-runtime'),
      ),
      schedule: 'rate(1 minute)',
      timeoutSeconds: 60,
      memorySize: 512,
      reservedConcurrency: 5,
      maxFanout: 2,
      alarms: {
        topic: props.alarmTopicArn ? Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn) : undefined,
      },
    });

    if (this.worker.functionUrl) {
      new CfnOutput(this, 'TickUrl', { value: `${this.worker.functionUrl.url}tick`, description: 'POST here, signed' });
    }
    if (this.worker.signingSecret) {
      new CfnOutput(this, 'SigningSecretArn', { value: this.worker.signingSecret.secretArn });
    }
    new CfnOutput(this, 'TickFunctionName', { value: this.worker.tickFunction.functionName });
    new CfnOutput(this, 'ConnectionBudget', {
      value: String(this.worker.connectionBudget),
      description: 'most database connections the functions open at once',
    });
  }
}
