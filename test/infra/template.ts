// Helpers for reading a synthesised CDK stack in the infra tests: stacks
// whose assets are not bundled (fast template checks), logical ids by path,
// and every IAM statement in a template.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { expect } from 'vitest';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const outRoot = mkdtempSync(join(tmpdir(), 'workhorse-cdk-test-'));

/** Removes every assembly newStack() wrote; call from the test file's afterAll. */
export function removeTestAssemblies(): void {
  rmSync(outRoot, { recursive: true, force: true });
}

/** A stack in an app that skips asset bundling (template assertions only). */
export function newStack(): Stack {
  const app = new App({ outdir: mkdtempSync(join(outRoot, 'app-')), context: { 'aws:cdk:bundling-stacks': [] } });
  return new Stack(app, 'Test');
}

/** The one logical id of `type` containing `pathPart` (and not `unlessPart`). */
export function logicalId(template: Template, type: string, pathPart: string, unlessPart?: string): string {
  const ids = Object.entries(template.findResources(type))
    .filter(([id]) => id.includes(pathPart) && !(unlessPart && id.includes(unlessPart)))
    .map(([id]) => id);
  expect(ids, `${type} matching ${pathPart}`).toHaveLength(1);
  return ids[0]!;
}

/** Every IAM statement in the template: managed-by-CDK policies and roles' inline policies. */
export function allStatements(template: Template): { owner: string; statement: Json }[] {
  const out: { owner: string; statement: Json }[] = [];
  for (const [id, r] of Object.entries(template.findResources('AWS::IAM::Policy'))) {
    for (const s of r.Properties.PolicyDocument.Statement) out.push({ owner: id, statement: s });
  }
  for (const [id, r] of Object.entries(template.findResources('AWS::IAM::Role'))) {
    for (const p of r.Properties.Policies ?? []) {
      for (const s of p.PolicyDocument.Statement) out.push({ owner: id, statement: s });
    }
  }
  return out;
}

export const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);
