// Option types for pairs of options the runtime takes one of (a
// connectionString or a pool, a cron or an interval, runAt or delayMs):
// the type says so as the check does, so giving both is a compile error,
// not only a ConfigError or ValidationError when the code runs.

/** `T` with exactly one of `A` and `B` given. */
export type ExactlyOne<T, A extends keyof T, B extends keyof T> = Omit<T, A | B> &
  (({ [K in A]-?: Exclude<T[K], undefined> } & { [K in B]?: undefined }) | ({ [K in B]-?: Exclude<T[K], undefined> } & { [K in A]?: undefined }));

/** `T` with at most one of `A` and `B` given. */
export type AtMostOne<T, A extends keyof T, B extends keyof T> = Omit<T, A | B> &
  (({ [K in A]?: T[K] } & { [K in B]?: undefined }) | ({ [K in B]?: T[K] } & { [K in A]?: undefined }));
