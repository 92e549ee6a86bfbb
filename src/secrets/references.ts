// Which environment variables are given as Secrets Manager secrets. Any
// variable X may be given as X_SECRET_ARN (the secret's ARN) instead of X:
// the Lambda handlers read the secret at run time and hand X to the
// configuration as if it had been set, so no secret value sits in the
// function's configuration and nothing in the configuration code knows
// which variables are secret. With X_SECRET_TEMPLATE beside it, the secret
// is a JSON object and X is the template filled from its fields
// (template.ts). Pure: the caller passes the environment.
import * as z from 'zod';
import { ConfigError, type ValidationIssue } from '../errors.js';
import { templateProblem } from './template.js';

export const SECRET_ARN_SUFFIX = '_SECRET_ARN';
export const SECRET_TEMPLATE_SUFFIX = '_SECRET_TEMPLATE';

/** One variable whose value is read from Secrets Manager. */
export interface SecretReference {
  /** The variable the configuration reads, e.g. DATABASE_URL. */
  variable: string;
  arn: string;
  /** Set when the variable is composed from the fields of a JSON secret. */
  template: string | undefined;
}

const arnSchema = z
  .string()
  .regex(
    /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:\S+$/,
    'expected a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)',
  );
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The secret references in `env`; throws ConfigError naming every bad variable. Empty variables count as unset. */
export function parseSecretReferences(env: Record<string, string | undefined>): SecretReference[] {
  const refs: SecretReference[] = [];
  const issues: ValidationIssue[] = [];
  const issue = (key: string, message: string) => issues.push({ path: [key], message });
  for (const [key, value] of Object.entries(env)) {
    if (!value) continue;
    if (key.endsWith(SECRET_TEMPLATE_SUFFIX)) {
      const variable = key.slice(0, -SECRET_TEMPLATE_SUFFIX.length);
      if (!env[`${variable}${SECRET_ARN_SUFFIX}`]) issue(key, `a template needs the secret it reads: set ${variable}${SECRET_ARN_SUFFIX}`);
      const problem = templateProblem(value);
      if (problem) issue(key, problem);
      continue;
    }
    if (!key.endsWith(SECRET_ARN_SUFFIX)) continue;
    const variable = key.slice(0, -SECRET_ARN_SUFFIX.length);
    if (!VARIABLE_NAME.test(variable)) {
      issue(key, 'names no variable: expected <VARIABLE>_SECRET_ARN');
      continue;
    }
    const arn = arnSchema.safeParse(value);
    if (!arn.success) issue(key, arn.error.issues[0]!.message);
    if (env[variable]) issue(key, `give ${variable} or ${key}, not both`);
    if (arn.success) refs.push({ variable, arn: arn.data, template: env[`${variable}${SECRET_TEMPLATE_SUFFIX}`] || undefined });
  }
  if (issues.length > 0) {
    const detail = issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid environment: ${detail}`, issues);
  }
  return refs.sort((a, b) => a.variable.localeCompare(b.variable));
}
