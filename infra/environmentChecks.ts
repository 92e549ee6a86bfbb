// What the Lambda handlers will refuse in the environment the construct is
// given, found at synth rather than at every invocation: the tick's own
// variables (each parsed, then held to the range of the option it becomes),
// the secrets settings and references both handlers read, and the HTTP
// function's variables. `cdk synth` fails naming the variable.
import * as z from 'zod';
import { loadHttpEnvConfig, loadRuntimeEnvironment } from '../src/config.js';
import { ConfigError } from '../src/errors.js';
import { parseTickEnv, TICK_VARIABLES } from '../src/tick/env.js';
import { tickOptionsSchema } from '../src/tick/options.js';

/** What the tick will refuse in `name=value`: the variable's own parse, then the range of the option it becomes. */
export function tickVariableProblems(name: string, value: string): string[] {
  let options: Record<string, unknown>;
  try {
    options = parseTickEnv({ [name]: value }).options;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.issues.map((i) => i.message);
  }
  const shape = tickOptionsSchema.shape as Record<string, z.ZodType>;
  return Object.entries(options).flatMap(([key, v]) => {
    if (v === undefined || !(key in shape)) return [];
    const r = shape[key]!.safeParse(v);
    return r.success ? [] : r.error.issues.map((i) => `${i.message} (the tick's ${key})`);
  });
}

/**
 * What the handlers refuse in `env` besides the tick's own variables
 * (tickVariableProblems): the secrets settings and references (X with
 * X_SECRET_ARN, a malformed ARN), and with `http` the HTTP function's
 * variables. Each problem names its variable.
 */
export function handlerVariableProblems(env: Record<string, string>, http: boolean): { name: string; message: string }[] {
  const problems: { name: string; message: string }[] = [];
  const collect = (load: () => unknown) => {
    try {
      load();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      for (const i of err.issues) problems.push({ name: String(i.path[0] ?? ''), message: i.message });
    }
  };
  collect(() => loadRuntimeEnvironment(env));
  if (http) {
    const httpOnly = Object.fromEntries(Object.entries(env).filter(([name]) => !TICK_VARIABLES.includes(name)));
    collect(() => loadHttpEnvConfig(httpOnly));
  }
  return problems;
}
