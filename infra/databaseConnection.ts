// How a function finds its database: the variables the construct sets. A
// plain URL is passed as DATABASE_URL (fine for development). A secret is
// passed by ARN only, as DATABASE_URL_SECRET_ARN, which the workhorse
// handlers read from Secrets Manager at run time (src/secrets/): no value,
// and no deploy-time dynamic reference to one, sits in the function's
// configuration, and a rotated secret takes effect without a redeploy. For
// a JSON secret, DATABASE_URL_SECRET_TEMPLATE says how the URL is composed
// from its fields.
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { DatabaseProps } from './workhorseTickWorkerProps.js';

/** Lambda Node.js 20+ only trusts Amazon's CAs (RDS included) when pointed at this bundle. */
export const LAMBDA_AWS_CA_BUNDLE = '/var/runtime/ca-cert.pem';

export interface DatabaseConnection {
  environment: Record<string, string>;
  /** The secret the function must be able to read; undefined for a plain URL. */
  secret: ISecret | undefined;
}

/** The template composing the URL from the secret's JSON (src/secrets/template.ts); undefined for a whole-URL secret. */
function urlTemplate(db: Extract<DatabaseProps, { secret: ISecret }>): string | undefined {
  switch (db.shape) {
    case 'url':
      return undefined;
    case 'json':
      return `{{${db.field}|raw}}`;
    case 'rds': {
      // Placeholders are percent-encoded, so any generated password survives the URL.
      const host = db.host ?? '{{host}}';
      const port = db.port ?? '{{port}}';
      const dbname = db.databaseName ? encodeURIComponent(db.databaseName) : '{{dbname}}';
      const query = db.urlQuery ? `?${db.urlQuery}` : '';
      return `postgres://{{username}}:{{password}}@${host}:${port}/${dbname}${query}`;
    }
  }
}

export function databaseConnection(db: DatabaseProps): DatabaseConnection {
  if ('url' in db) return { environment: { DATABASE_URL: db.url }, secret: undefined };
  const template = urlTemplate(db);
  return {
    environment: {
      DATABASE_URL_SECRET_ARN: db.secret.secretArn,
      ...(template ? { DATABASE_URL_SECRET_TEMPLATE: template } : {}),
    },
    secret: db.secret,
  };
}
