// How the functions get DATABASE_URL. The workhorse runtime reads one
// connection URL from its environment and does not fetch secrets itself, so
// a secret reaches the function as a CloudFormation dynamic reference
// ({{resolve:secretsmanager:…}}): CloudFormation resolves it at deploy time
// and the plaintext lands in the function's configuration. The trade-off:
// anyone allowed lambda:GetFunctionConfiguration can read the URL, and a
// rotated secret needs a redeploy to take effect. The functions are still
// granted read on that one secret (and told its ARN) so runtime code can
// re-read it without a wider policy.
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { DatabaseProps } from './workhorseTickWorkerProps.js';

/** Lambda Node.js 20+ only trusts Amazon's CAs (RDS included) when pointed at this bundle. */
export const LAMBDA_AWS_CA_BUNDLE = '/var/runtime/ca-cert.pem';

export interface DatabaseConnection {
  environment: Record<string, string>;
  /** The secret the functions may read; undefined for a plain URL. */
  secret: ISecret | undefined;
}

/** The URL as a deploy-time token built from the secret. */
function urlFromSecret(db: Extract<DatabaseProps, { secret: ISecret }>): string {
  const s = db.secret;
  switch (db.shape) {
    case 'url':
      return s.secretValue.unsafeUnwrap();
    case 'json':
      return s.secretValueFromJson(db.field).unsafeUnwrap();
    case 'rds': {
      // RDS-generated passwords exclude the characters a URL would need escaped.
      const part = (key: string) => s.secretValueFromJson(key).unsafeUnwrap();
      const dbname = db.databaseName ?? part('dbname');
      const query = db.urlQuery ? `?${db.urlQuery}` : '';
      const host = db.host ?? part('host');
      const port = db.port ?? part('port');
      return `postgres://${part('username')}:${part('password')}@${host}:${port}/${dbname}${query}`;
    }
  }
}

export function databaseConnection(db: DatabaseProps): DatabaseConnection {
  if ('url' in db) return { environment: { DATABASE_URL: db.url }, secret: undefined };
  return {
    environment: { DATABASE_URL: urlFromSecret(db), WORKHORSE_DATABASE_SECRET_ARN: db.secret.secretArn },
    secret: db.secret,
  };
}
