// Secret templates: how one variable is composed from the fields of a JSON
// secret, e.g. DATABASE_URL from the { username, password, host, port,
// dbname } secret RDS generates. `{{field}}` inserts the field
// percent-encoded (templates build URLs, so a password may hold any
// character); `{{field|raw}}` inserts it as it is (a whole URL kept in one
// field). Fields must be strings or numbers.

const PLACEHOLDER = /\{\{([A-Za-z0-9_.-]+)(\|raw)?\}\}/g;

/** Why a template is malformed, or undefined when it is fine. */
export function templateProblem(template: string): string | undefined {
  const stripped = template.replace(PLACEHOLDER, '');
  if (stripped.includes('{{') || stripped.includes('}}')) {
    return 'placeholders are {{field}} or {{field|raw}}, field made of letters, digits, "_", "." and "-"';
  }
  if (stripped === template) return 'a template needs at least one {{field}} placeholder';
  return undefined;
}

/** The fields a template reads. */
export function templateFields(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

/**
 * Fills `template` from `secret` (a JSON object's text). Throws a plain
 * Error naming what is wrong (never a field's value) for the caller to wrap.
 */
export function fillTemplate(template: string, secret: string): string {
  let fields: unknown;
  try {
    fields = JSON.parse(secret);
  } catch {
    throw new Error('the secret is not JSON, but its variable has a template');
  }
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
    throw new Error('the secret is not a JSON object, but its variable has a template');
  }
  const record = fields as Record<string, unknown>;
  for (const f of templateFields(template)) {
    const v = record[f];
    if (typeof v !== 'string' && typeof v !== 'number') {
      throw new Error(`the secret has no string or number field "${f}" (its template needs it)`);
    }
  }
  return template.replace(PLACEHOLDER, (_, field: string, raw: string | undefined) => {
    const v = String(record[field]);
    return raw ? v : encodeURIComponent(v);
  });
}
