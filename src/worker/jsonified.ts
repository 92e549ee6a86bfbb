// The type of a step's result as the handler gets it back. A step records
// its result as JSON and answers the recorded JSON on every run, the first
// included, so the value is what JSON.stringify and JSON.parse make of it: a
// Date is its ISO string, a Map or Set is {}, a typed array an object of its
// elements by index, an undefined field or a method is gone, undefined alone
// is null. Typing the answer as the callback's own type promised a Date
// where the handler gets a string. What a type cannot tell apart stays as it
// is: NaN and Infinity are numbers and an invalid Date a Date to the type,
// and null in the JSON.

/** What JSON.stringify leaves out of an object, writes as null in an array, and (alone) is recorded as null. */
type Dropped = void | undefined | symbol | ((...args: never[]) => unknown);

/** `T` after a round trip through JSON, as `ctx.step` and `ctx.txStep` answer it. `unknown` and `any` stay as they are. */
export type Jsonified<T> = unknown extends T ? T : T extends Dropped ? null : JsonValue<T>;

type JsonValue<T> = T extends { toJSON(...args: never[]): infer J }
  ? Jsonified<J>
  : T extends string | number | boolean | null
    ? T
    : T extends ReadonlyMap<unknown, unknown> | ReadonlySet<unknown> | ArrayBuffer | DataView
      ? Record<string, never>
      : // A typed array is an object of its elements by index: { "0": 1, "1": 2 }, no length.
        T extends ArrayBufferView
        ? Record<number, number>
      : T extends readonly unknown[]
        ? { -readonly [K in keyof T]: Jsonified<T[K]> }
        : T extends object
          ? Flat<Kept<T> & MaybeKept<T>>
          : never;

/** Whether JSON may leave a field of type `V` out: some member of `V` is dropped (`any` is not: it may be anything). */
type SometimesDropped<V> = 0 extends 1 & V ? false : [Extract<V, Dropped>] extends [never] ? false : true;
/** Fields JSON always keeps: required, as they were. */
type Kept<T> = { -readonly [K in keyof T as SometimesDropped<T[K]> extends true ? never : K]: Jsonified<T[K]> };
/**
 * Fields JSON keeps only when they hold a value it can write
 * (`a: number | undefined`, `f: string | (() => void)`): optional. Fields
 * it always drops (`undefined`, a method) are gone.
 */
type MaybeKept<T> = {
  -readonly [K in keyof T as SometimesDropped<T[K]> extends true ? ([T[K]] extends [Dropped] ? never : K) : never]?: Jsonified<Exclude<T[K], Dropped>>;
};
type Flat<T> = { [K in keyof T]: T[K] };
