// The protocol seam: one function per SQL protocol function, grouped in one
// module per lifecycle stage that mirrors sql/protocol/ file for file
// (registry, wake, enqueue, claim, heartbeat, recovery, settle, steps,
// waits, signals, children, operator, reads, schedules, tick, retention,
// outbox, alerts). `Protocol` is what a provider
// implements; `postgresProtocol` is the PostgreSQL one, and the only code
// in the runtime that sends SQL. Every call is one round trip, parameterised;
// a failure calling a function the database lacks is diagnosed against the
// schema version (missingFunction.ts).
import * as alerts from './protocol/alerts.js';
import * as children from './protocol/children.js';
import * as claim from './protocol/claim.js';
import * as enqueue from './protocol/enqueue.js';
import * as heartbeat from './protocol/heartbeat.js';
import * as operator from './protocol/operator.js';
import * as outbox from './protocol/outbox.js';
import * as reads from './protocol/reads.js';
import * as recovery from './protocol/recovery.js';
import * as registry from './protocol/registry.js';
import * as retention from './protocol/retention.js';
import * as schedules from './protocol/schedules.js';
import * as settle from './protocol/settle.js';
import * as signals from './protocol/signals.js';
import * as steps from './protocol/steps.js';
import * as tick from './protocol/tick.js';
import * as waits from './protocol/waits.js';
import * as wake from './protocol/wake.js';
import { withSchemaDiagnosis } from './missingFunction.js';

export type { Queryable } from './queryable.js';
export * from './protocol/alerts.js';
export * from './protocol/children.js';
export * from './protocol/claim.js';
export * from './protocol/enqueue.js';
export * from './protocol/heartbeat.js';
export * from './protocol/operator.js';
export * from './protocol/outbox.js';
export * from './protocol/reads.js';
export * from './protocol/recovery.js';
export * from './protocol/registry.js';
export * from './protocol/retention.js';
export * from './protocol/schedules.js';
export * from './protocol/settle.js';
export * from './protocol/signals.js';
export * from './protocol/steps.js';
export * from './protocol/tick.js';
export * from './protocol/waits.js';
export * from './protocol/wake.js';

/** Every protocol call, by stage. A second provider implements this. */
export interface Protocol {
  registerWorker: typeof registry.registerWorker;
  deregisterWorker: typeof registry.deregisterWorker;
  beginDrain: typeof registry.beginDrain;
  releaseUnstarted: typeof registry.releaseUnstarted;
  refreshWorker: typeof registry.refreshWorker;
  nextDue: typeof wake.nextDue;
  enqueueMany: typeof enqueue.enqueueMany;
  claimMany: typeof claim.claimMany;
  heartbeatMany: typeof heartbeat.heartbeatMany;
  recoverExpired: typeof recovery.recoverExpired;
  completeMany: typeof settle.completeMany;
  failMany: typeof settle.failMany;
  setProgress: typeof steps.setProgress;
  recordStep: typeof steps.recordStep;
  recordTxStep: typeof steps.recordTxStep;
  beginTxStep: typeof steps.beginTxStep;
  beginWait: typeof waits.beginWait;
  loseWaits: typeof waits.loseWaits;
  suspend: typeof waits.suspend;
  suspendMany: typeof waits.suspendMany;
  currentWait: typeof waits.currentWait;
  openWaits: typeof waits.openWaits;
  signalJob: typeof signals.signalJob;
  signalKey: typeof signals.signalKey;
  decide: typeof signals.decide;
  listDecisions: typeof signals.listDecisions;
  beginSpawn: typeof children.beginSpawn;
  linkChild: typeof children.linkChild;
  cancel: typeof operator.cancel;
  retry: typeof operator.retry;
  setQueue: typeof operator.setQueue;
  setWorkerPaused: typeof operator.setWorkerPaused;
  getJob: typeof reads.getJob;
  listJobs: typeof reads.listJobs;
  listWorkers: typeof reads.listWorkers;
  listQueues: typeof reads.listQueues;
  listLeases: typeof reads.listLeases;
  upsertSchedules: typeof schedules.upsertSchedules;
  databaseNow: typeof schedules.databaseNow;
  claimSlots: typeof schedules.claimSlots;
  fireSlots: typeof schedules.fireSlots;
  listSchedules: typeof schedules.listSchedules;
  getSchedule: typeof schedules.getSchedule;
  setScheduleEnabled: typeof schedules.setScheduleEnabled;
  deleteSchedule: typeof schedules.deleteSchedule;
  tickStart: typeof tick.tickStart;
  countReady: typeof tick.countReady;
  retentionBatch: typeof retention.retentionBatch;
  publish: typeof outbox.publish;
  leaseOutbox: typeof outbox.leaseOutbox;
  settleOutbox: typeof outbox.settleOutbox;
  releaseOutbox: typeof outbox.releaseOutbox;
  listOutbox: typeof outbox.listOutbox;
  retryOutbox: typeof outbox.retryOutbox;
  discardOutbox: typeof outbox.discardOutbox;
  purgeOutbox: typeof outbox.purgeOutbox;
  outboxNextDueMs: typeof outbox.outboxNextDueMs;
  setOutboxLifecycle: typeof outbox.setOutboxLifecycle;
  evaluateAlerts: typeof alerts.evaluateAlerts;
  listAlerts: typeof alerts.listAlerts;
}

/** The stage modules' calls as one Protocol, before withSchemaDiagnosis. */
const postgresCalls: Protocol = {
  ...registry,
  ...wake,
  ...enqueue,
  claimMany: claim.claimMany,
  heartbeatMany: heartbeat.heartbeatMany,
  ...recovery,
  completeMany: settle.completeMany,
  failMany: settle.failMany,
  ...steps,
  beginWait: waits.beginWait,
  loseWaits: waits.loseWaits,
  suspend: waits.suspend,
  suspendMany: waits.suspendMany,
  currentWait: waits.currentWait,
  openWaits: waits.openWaits,
  signalJob: signals.signalJob,
  signalKey: signals.signalKey,
  decide: signals.decide,
  listDecisions: signals.listDecisions,
  ...children,
  ...operator,
  getJob: reads.getJob,
  listJobs: reads.listJobs,
  listWorkers: reads.listWorkers,
  listQueues: reads.listQueues,
  listLeases: reads.listLeases,
  upsertSchedules: schedules.upsertSchedules,
  databaseNow: schedules.databaseNow,
  claimSlots: schedules.claimSlots,
  fireSlots: schedules.fireSlots,
  listSchedules: schedules.listSchedules,
  getSchedule: schedules.getSchedule,
  setScheduleEnabled: schedules.setScheduleEnabled,
  deleteSchedule: schedules.deleteSchedule,
  tickStart: tick.tickStart,
  countReady: tick.countReady,
  ...retention,
  ...outbox,
  ...alerts,
};

/**
 * The PostgreSQL provider: every call above, and a call of a workhorse
 * function the database lacks on a schema of another version is a
 * SchemaVersionError (src/db/missingFunction.ts).
 */
export const postgresProtocol: Protocol = withSchemaDiagnosis(postgresCalls);
