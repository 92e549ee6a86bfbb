// The construct's `environment` prop may add variables but not set the ones
// the construct sets itself: DATABASE_URL beside the DATABASE_URL_SECRET_ARN
// the construct passes fails every invocation (and puts a credential in the
// function's configuration), and WORKHORSE_NAMESPACE or the tick timings
// would silently win over, or lose to, the props of the same meaning. Such
// a key fails `cdk synth` with a ConfigError naming the prop to use; any
// other key reaches every function.
import { Template } from 'aws-cdk-lib/assertions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { afterAll, describe, expect, it } from 'vitest';
import { EXAMPLE_APP_MODULE } from '../../infra/exampleStack.js';
import { WorkhorseTickWorker } from '../../infra/WorkhorseTickWorker.js';
import { ConfigError } from '../../src/errors.js';
import { allStatements, asArray, newStack, removeTestAssemblies, type Json } from './template.js';

afterAll(removeTestAssemblies);

const worker = (environment: Record<string, string>) => {
  const stack = newStack();
  new WorkhorseTickWorker(stack, 'Workhorse', { app: EXAMPLE_APP_MODULE, database: { secret: new Secret(stack, 'Db') }, environment });
  return stack;
};

describe('the environment prop', () => {
  const refused: [Record<string, string>, RegExp][] = [
    [{ DATABASE_URL: 'postgres://app:hunter2@db:5432/app' }, /environment\.DATABASE_URL: DATABASE_URL is set by the construct: use the database and runtimeDatabase props/],
    [{ DATABASE_URL_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:db-AbCdEf' }, /environment\.DATABASE_URL_SECRET_ARN: .*DATABASE_URL given as a secret/],
    [{ WORKHORSE_SIGNING_SECRET: 'a-signing-secret-in-plain-sight' }, /WORKHORSE_SIGNING_SECRET is set by the construct: use the http\.signingSecret prop/],
    [{ WORKHORSE_NAMESPACE: 'billing' }, /WORKHORSE_NAMESPACE is set by the construct: use the namespace prop/],
    [{ WORKHORSE_HEARTBEAT_MS: '2000' }, /WORKHORSE_HEARTBEAT_MS is set by the construct: use the heartbeatMs prop/],
    // Fan-out may invoke only the tick function (its IAM): another name failed with AccessDenied when it ran.
    [{ WORKHORSE_FANOUT_FUNCTION: 'other-fn' }, /WORKHORSE_FANOUT_FUNCTION is set by the construct: use the maxFanout prop/],
    [{ WORKHORSE_MAX_GENERATION: '5' }, /WORKHORSE_MAX_GENERATION is set by the construct: use the maxGeneration prop/],
    // Secret values in every function's configuration (the admin token list reached the tick and migration functions).
    [{ WORKHORSE_API_TOKENS: '[{"token":"plain-token-in-config-0123","scopes":["admin"]}]' }, /WORKHORSE_API_TOKENS holds a secret value.*secretEnvironment: \{ WORKHORSE_API_TOKENS: secret \}/],
    [{ WORKHORSE_SESSION_SECRET: 'a'.repeat(40) }, /WORKHORSE_SESSION_SECRET holds a secret value/],
    // Overridden on the tick function, kept on the HTTP one.
    [{ WORKHORSE_BACKLOG_METRIC: 'false' }, /WORKHORSE_BACKLOG_METRIC is set by the construct/],
    // The HTTP function's own budget, given as a secret beside the construct's plain value: every invocation failed.
    [{ WORKHORSE_HTTP_TICK_BUDGET_MS_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:b-AbCdEf' }, /WORKHORSE_HTTP_TICK_BUDGET_MS is set on the HTTP function by the construct: give it plainly/],
    // Values that parse but that the tick refuses: each invocation failed with "invalid tick options".
    [{ WORKHORSE_CONCURRENCY: '0' }, /environment\.WORKHORSE_CONCURRENCY: .*>=1 \(the tick's concurrency\)/],
    [{ WORKHORSE_RETENTION_MS: '-5' }, /environment\.WORKHORSE_RETENTION_MS/],
    [{ WORKHORSE_QUEUES: 'a b' }, /environment\.WORKHORSE_QUEUES: .*\(the tick's queues\)/],
    // What the handlers read besides the tick's variables, refused by them at every invocation (/healthz included).
    [{ WORKHORSE_HTTP_TICK_BUDGET_MS: '500' }, /environment\.WORKHORSE_HTTP_TICK_BUDGET_MS: Too small: expected number to be >=1000/],
    [{ WORKHORSE_MAX_BODY_BYTES: '5' }, /environment\.WORKHORSE_MAX_BODY_BYTES/],
    [{ WORKHORSE_API_TOKENS: '[{' }, /environment\.WORKHORSE_API_TOKENS: not valid JSON/],
    [{ WORKHORSE_SIGNED_SCOPES: 'bogus' }, /environment\.WORKHORSE_SIGNED_SCOPES/],
    [{ WORKHORSE_SECRETS_MAX_AGE_MS: '5' }, /environment\.WORKHORSE_SECRETS_MAX_AGE_MS/],
    [{ WORKHORSE_SECRETS_ENDPOINT: 'nope' }, /environment\.WORKHORSE_SECRETS_ENDPOINT/],
    [{ STRIPE_KEY_SECRET_ARN: 'not-an-arn' }, /environment\.STRIPE_KEY_SECRET_ARN/],
    [{ STRIPE_KEY: 'sk_live', STRIPE_KEY_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:s-AbCdEf' }, /environment\.STRIPE_KEY/],
  ];
  for (const [environment, message] of refused) {
    it(`refuses ${Object.keys(environment)[0]} at synth with a ConfigError`, () => {
      expect(() => worker(environment)).toThrow(ConfigError);
      expect(() => worker(environment)).toThrow(message);
    });
  }

  it('refuses http.secretEnvironment naming a variable the construct sets on the HTTP function', () => {
    const stack = newStack();
    const budget = new Secret(stack, 'Budget');
    expect(
      () =>
        new WorkhorseTickWorker(stack, 'Workhorse', {
          app: EXAMPLE_APP_MODULE,
          database: { secret: new Secret(stack, 'Db') },
          http: { secretEnvironment: { WORKHORSE_HTTP_TICK_BUDGET_MS: budget } },
        }),
    ).toThrow(/http\.secretEnvironment\.WORKHORSE_HTTP_TICK_BUDGET_MS: WORKHORSE_HTTP_TICK_BUDGET_MS is already set by the construct/);
  });

  it("takes a secret's ARN known only at deploy (a token) with its template", () => {
    const stack = newStack();
    const stripe = new Secret(stack, 'Stripe');
    expect(
      () =>
        new WorkhorseTickWorker(stack, 'Workhorse', {
          app: EXAMPLE_APP_MODULE,
          database: { secret: new Secret(stack, 'Db') },
          environment: { STRIPE_KEY_SECRET_ARN: stripe.secretArn, STRIPE_KEY_SECRET_TEMPLATE: 'sk_{{key}}' },
        }),
    ).not.toThrow();
  }, 60_000);

  it('passes any other variable to every function', () => {
    const t = Template.fromStack(worker({ LOG_LEVEL: 'debug', WORKHORSE_CONCURRENCY: '4' }));
    const fns = Object.values(t.findResources('AWS::Lambda::Function')) as Json[];
    const ours = fns.filter((f) => f.Properties.Environment?.Variables?.WORKHORSE_NAMESPACE === 'default');
    expect(ours).toHaveLength(3);
    for (const f of ours) expect(f.Properties.Environment.Variables).toMatchObject({ LOG_LEVEL: 'debug', WORKHORSE_CONCURRENCY: '4' });
  }, 60_000);

  it('lets every function read a secret environment names as X_SECRET_ARN (it was granted to none: AccessDenied at every invocation)', () => {
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:stripe-key';
    const t = Template.fromStack(worker({ STRIPE_KEY_SECRET_ARN: arn }));
    const fns = t.findResources('AWS::Lambda::Function') as Record<string, Json>;
    const ours = Object.entries(fns).filter(([, f]) => f.Properties.Environment?.Variables?.WORKHORSE_NAMESPACE === 'default');
    expect(ours).toHaveLength(3);
    const policies = t.findResources('AWS::IAM::Policy') as Record<string, Json>;
    for (const [id, f] of ours) {
      const roleId = f.Properties.Role['Fn::GetAtt'][0] as string;
      const attached = new Set(Object.entries(policies).filter(([, p]) => asArray(p.Properties.Roles).some((r: Json) => r.Ref === roleId)).map(([pid]) => pid));
      const reads = allStatements(t)
        .filter(({ owner }) => attached.has(owner))
        .map((s) => s.statement)
        .filter((s) => asArray(s.Action).includes('secretsmanager:GetSecretValue'));
      expect(reads, id).toHaveLength(1);
      expect(asArray(reads[0]!.Resource), id).toEqual(expect.arrayContaining([arn, `${arn}-??????`]));
    }
  }, 60_000);

  it('keeps a WORKHORSE_BUILD given in environment instead of the id of the bundles', () => {
    const builds = (t: Template) =>
      (Object.values(t.findResources('AWS::Lambda::Function')) as Json[])
        .filter((f) => f.Properties.Environment?.Variables?.WORKHORSE_NAMESPACE === 'default')
        .map((f) => f.Properties.Environment.Variables.WORKHORSE_BUILD);
    // Without it, the tick and HTTP functions share the bundles' id; the migration has none.
    const own = builds(Template.fromStack(worker({})));
    const id = own.find((b) => b !== undefined);
    expect(id).toMatch(/^[0-9a-f]{12}$/);
    expect([...own].sort()).toEqual([id, id, undefined]);
    expect(builds(Template.fromStack(worker({ WORKHORSE_BUILD: 'v2.3.1' })))).toEqual(['v2.3.1', 'v2.3.1', 'v2.3.1']);
  }, 60_000);

  it("adds NODE_OPTIONS to the construct's --enable-source-maps instead of replacing it", () => {
    const t = Template.fromStack(worker({ NODE_OPTIONS: '--max-old-space-size=100' }));
    const fns = Object.values(t.findResources('AWS::Lambda::Function')) as Json[];
    const ours = fns.filter((f) => f.Properties.Environment?.Variables?.WORKHORSE_NAMESPACE === 'default');
    expect(ours).toHaveLength(3);
    for (const f of ours) expect(f.Properties.Environment.Variables.NODE_OPTIONS).toBe('--enable-source-maps --max-old-space-size=100');
  }, 60_000);
});
