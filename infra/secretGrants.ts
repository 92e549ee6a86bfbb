// Least-privilege secret access: a function may call
// secretsmanager:GetSecretValue on exactly the secrets it is given (and
// kms:Decrypt through Secrets Manager for a secret encrypted with its own
// key), nothing more: no DescribeSecret, no other secret. Secrets imported
// by name have a partial ARN, which matches the full one only with the
// six-character suffix Secrets Manager appends ("-??????"). A secret named
// in the `environment` prop as X_SECRET_ARN (read by the handlers as X) is
// one of each function's secrets too: it was granted to none, so every
// invocation failed with AccessDenied, the deploy's migration included.
import { Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';

/** The ARN an IAM policy names for `secret`. */
export function secretPolicyArn(secret: ISecret): string {
  return secret.secretFullArn ?? `${secret.secretArn}-??????`;
}

/** The secret ARNs `environment` gives as X_SECRET_ARN, each as it may be written (complete, or without its suffix). */
export function environmentSecretArns(environment: Record<string, string>): string[] {
  return Object.entries(environment)
    .filter(([name]) => name.endsWith('_SECRET_ARN'))
    .flatMap(([, arn]) => [arn, `${arn}-??????`]);
}

/** Lets `fn` read `secrets`, and the secrets `arns` name (environmentSecretArns). */
export function allowSecretReads(fn: IFunction, secrets: readonly ISecret[], arns: readonly string[] = []): void {
  const unique = [...new Set(secrets)];
  if (unique.length === 0 && arns.length === 0) return;
  fn.addToRolePolicy(new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [...unique.map(secretPolicyArn), ...new Set(arns)] }));
  const keys = [...new Set(unique.flatMap((s) => (s.encryptionKey ? [s.encryptionKey] : [])))];
  if (keys.length > 0) {
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['kms:Decrypt'],
        resources: keys.map((k) => k.keyArn),
        conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${Stack.of(fn).region}.amazonaws.com` } },
      }),
    );
  }
}
