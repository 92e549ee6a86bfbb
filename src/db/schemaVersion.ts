// The schema version this code was written against: the number of the
// newest file in sql/. A test keeps the two in step.
export const SCHEMA_VERSION = 20;
