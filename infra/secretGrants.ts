// Least-privilege secret access: a function may call
// secretsmanager:GetSecretValue on exactly the secrets it is given (and
// kms:Decrypt through Secrets Manager for a secret encrypted with its own
// key), nothing more: no DescribeSecret, no other secret. Secrets imported
// by name have a partial ARN, which matches the full one only with the
// six-character suffix Secrets Manager appends ("-??????").
import { Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';

/** The ARN an IAM policy names for `secret`. */
export function secretPolicyArn(secret: ISecret): string {
  return secret.secretFullArn ?? `${secret.secretArn}-??????`;
}

export function allowSecretReads(fn: IFunction, secrets: readonly ISecret[]): void {
  const unique = [...new Set(secrets)];
  if (unique.length === 0) return;
  fn.addToRolePolicy(new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: unique.map(secretPolicyArn) }));
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
